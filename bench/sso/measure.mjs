// The server time of an enterprise SSO sign-in over OpenID Connect (issue 13, bench/README.md
// "Enterprise SSO"), against the test stack left running by
//   PORTCULLIS_TEST_PORT=<port> PORTCULLIS_TEST_KEEP_RUNNING=1 scripts/test integration/sso-oidc.test.mjs
//   node bench/sso/measure.mjs            (BENCH_SSO_LOGINS, default 60)
//
// An IdP of its own on the stack's port + 5 (the test IdP's address: allowed past the SSRF guard,
// its certificate signed by the run's CA) answers discovery, JWKS, token and userinfo; each
// sign-in is login_hint → /sso/start → (the IdP's page skipped: a code at once) → /sso/oidc/callback → consent, one
// at a time. From the sso access log (duration_us) the callback's and the start's server time
// per sign-in; from the IdP the time it spent answering the callback's back-channel requests.
// Portcullis' own share of the callback is the difference. The first sign-in a worker serves
// is cold (its discovery and JWKS caches are empty); the table shows all, and the warm ones.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { baseUrl, varDir, sleep } from '../../tests/integration/harness.mjs';
import { api, unique } from '../../tests/integration/management.mjs';
import { orgWithDomain, toIdentityProvider, listenTls, closeAll } from '../../tests/integration/sso-fixtures.mjs';
import { Browser } from '../../tests/integration/browser.mjs';

const { SignJWT, exportJWK, generateKeyPair } = createRequire(new URL('../../tests/package.json', import.meta.url))('jose');

const logins = Number(process.env.BENCH_SSO_LOGINS ?? 60);
const port = Number(new URL(baseUrl).port) + 5;
const issuer = `https://127.0.0.1:${port}/bench-${unique()}`;
const clientId = 'bench-client';
const secret = 'bench-secret';
const codes = new Map();
const key = await generateKeyPair('RS256');
const jwks = { keys: [{ ...(await exportJWK(key.publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' }] };
const idpMs = { current: 0 };
const servers = [];

await listenTls(servers, port, async (req, res) => {
  const started = process.hrtime.bigint();
  res.on('finish', () => { idpMs.current += Number(process.hrtime.bigint() - started) / 1e6; });
  const url = new URL(req.url, `https://127.0.0.1:${port}`);
  const json = (status, body) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const p = url.pathname.replace(new URL(issuer).pathname, '');
  if (p === '/.well-known/openid-configuration') {
    return json(200, { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`, userinfo_endpoint: `${issuer}/userinfo`, response_types_supported: ['code'],
      subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] });
  }
  if (p === '/jwks') return json(200, jwks);
  if (p === '/token') {
    let body = '';
    for await (const chunk of req) body += chunk;
    const got = codes.get(new URLSearchParams(body).get('code'));
    if (!got) return json(400, { error: 'invalid_grant' });
    const now = Math.floor(Date.now() / 1000);
    const idToken = await new SignJWT({ email: got.email, email_verified: true, nonce: got.nonce, given_name: 'Bench' })
      .setProtectedHeader({ alg: 'RS256', kid: 'bench' }).setIssuer(issuer).setAudience(clientId).setSubject(got.email)
      .setIssuedAt(now).setExpirationTime(now + 300).sign(key.privateKey);
    return json(200, { access_token: 'at', token_type: 'Bearer', id_token: idToken });
  }
  return json(404, {});
});

const { org, domain } = await orgWithDomain('bench');
const created = await api('POST', `/api/v1/organizations/${org.id}/connections`, {
  json: { type: 'oidc', name: 'Bench IdP', issuer, client_id: clientId, client_secret: secret } });
if (created.status !== 201) throw new Error(created.text);
const active = await api('PATCH', `/api/v1/organizations/${org.id}/connections/${created.json.id}`, { json: { state: 'active' } });
if (active.status !== 200) throw new Error(active.text);

const ssoLog = path.join(varDir, 'log', 'sso.log');
const logLines = () => readFileSync(ssoLog, 'utf8').split('\n').filter(Boolean);
const rows = [];
for (let i = 0; i < logins; i++) {
  const b = new Browser();
  const to = await toIdentityProvider(b, `bench.${unique()}@${domain}`);
  // The IdP's login page, skipped: a code for this authorization request at once.
  const code = `c${unique()}`;
  codes.set(code, { nonce: to.searchParams.get('nonce'), email: to.searchParams.get('login_hint') });
  const before = logLines().length;
  idpMs.current = 0;
  const r = await b.request(`${to.searchParams.get('redirect_uri')}?code=${code}&state=${encodeURIComponent(to.searchParams.get('state'))}`);
  if (r.status !== 303 || !/\/oauth\/consent/.test(r.location ?? '')) throw new Error(`sign-in ${i}: ${r.status} ${r.location} ${r.html.slice(0, 300)}`);
  await sleep(20);  // the access log line follows the response
  const line = logLines().slice(before).map((l) => JSON.parse(l)).find((l) => l.path === '/sso/oidc/callback');
  rows.push({ callback: line.duration_us / 1000, idp: idpMs.current, waited: (line.outbound_us ?? 0) / 1000, pid: line.pid });
}
await closeAll(servers);

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const seen = new Set();
const warm = rows.filter((r) => { const first = !seen.has(r.pid); seen.add(r.pid); return !first; });
const fmt = (x) => x.toFixed(1);
// Two views of Portcullis' own share: minus what the IdP measured (its answers, not the TLS
// handshakes), and minus what the worker measured waiting on the IdP (outbound_us: connect,
// TLS, answer), the tests' view (docs/sso.md "Server time").
console.log(`| sign-ins | callback p50 | p90 | max | IdP back-channel p50 | own (minus the IdP's time) p50 | p90 | own (minus outbound_us) p50 | p90 |`);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const [name, set] of [['all', rows], ['warm (not the first of a worker)', warm]]) {
  if (!set.length) continue;
  const own = set.map((r) => r.callback - r.idp);
  const ownWorker = set.map((r) => r.callback - r.waited);
  console.log(`| ${name}: ${set.length} | ${fmt(pct(set.map((r) => r.callback), 0.5))} ms | ${fmt(pct(set.map((r) => r.callback), 0.9))} ms | ` +
    `${fmt(Math.max(...set.map((r) => r.callback)))} ms | ${fmt(pct(set.map((r) => r.idp), 0.5))} ms | ${fmt(pct(own, 0.5))} ms | ${fmt(pct(own, 0.9))} ms | ` +
    `${fmt(pct(ownWorker, 0.5))} ms | ${fmt(pct(ownWorker, 0.9))} ms |`);
}
