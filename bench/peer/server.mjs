// The peer of bench/compare: npm oidc-provider 9 as a Node cluster (PEER_WORKERS processes, 2 by
// default) on its own MariaDB database, configured as an MCP authorization server would be:
// one public client with PKCE, resource indicators with RS256 JWT access tokens, refresh tokens
// rotated on every use. The interaction routes sign the one bench account in and grant its
// scope at once (no pages): the bench measures the protocol endpoints, not a login form.
//
//   PEER_PORT=18405 PEER_DB_SOCKET=/path/mysqld.sock PEER_DB_USER=u PEER_DB_PASSWORD=p \
//     PEER_DB_NAME=peer_oidc node server.mjs
import cluster from 'node:cluster';
import http from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';
import MariaDBAdapter, { connect, schema } from './adapter.mjs';

const env = process.env;
const port = Number(env.PEER_PORT ?? 18405);
const issuer = `http://127.0.0.1:${port}`;
export const resource = 'https://bench.peer.test/mcp';
const scope = 'bench:read';
const workers = Number(env.PEER_WORKERS ?? 2);
const db = { socketPath: env.PEER_DB_SOCKET, user: env.PEER_DB_USER, password: env.PEER_DB_PASSWORD, database: env.PEER_DB_NAME ?? 'peer_oidc' };

if (cluster.isPrimary) {
  // One signing key and one cookie secret for all workers.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'peer-rs256', alg: 'RS256', use: 'sig' };
  const pool = connect(db);
  await pool.query(schema);
  await pool.end();
  const shared = { PEER_JWK: JSON.stringify(jwk), PEER_COOKIE_KEY: Math.random().toString(36).slice(2) + Date.now() };
  for (let i = 0; i < workers; i++) cluster.fork(shared);
  cluster.on('exit', (w, code, signal) => {
    console.error(`peer worker ${w.process.pid} exited (${signal ?? code})`);
    process.exit(1);
  });
  const stop = () => {
    for (const w of Object.values(cluster.workers)) w.kill('SIGTERM');
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  connect(db);
  const provider = new Provider(issuer, {
    adapter: MariaDBAdapter,
    clients: [{
      client_id: 'bench',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://127.0.0.1:3000/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }],
    jwks: { keys: [JSON.parse(env.PEER_JWK)] },
    cookies: { keys: [env.PEER_COOKIE_KEY] },
    scopes: ['openid', 'offline_access'],
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    // Every grant gets a refresh token (as Portcullis issues one with every code exchange).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async () => ({
          scope,
          audience: resource,
          accessTokenTTL: 3600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    ttl: { AccessToken: 3600, AuthorizationCode: 60, RefreshToken: 14 * 86400, Grant: 14 * 86400, Session: 14 * 86400, Interaction: 600 },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  provider.on('server_error', (_ctx, err) => console.error('server_error', err));

  // Sign-in and consent without pages: the bench account, every scope and the resource.
  async function interaction(req, res) {
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await provider.interactionFinished(req, res, { login: { accountId: 'bench-user' } }, { mergeWithLastSubmission: false });
        return;
      }
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
      const { missingOIDCScope, missingResourceScopes } = details.prompt.details;
      if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
      for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    } catch (err) {
      res.statusCode = 500;
      res.end(String(err));
    }
  }

  const callback = provider.callback();
  http.createServer((req, res) => {
    if (req.url.startsWith('/interaction/')) interaction(req, res);
    else callback(req, res);
  }).listen(port, '127.0.0.1');
}
