// Client ID Metadata Documents end to end (contract §2.2): the official MCP SDK client
// presents its document URL as client_id; Portcullis fetches it from an HTTPS server of the
// test on loopback (trusted through PORTCULLIS_OUTBOUND_CA_FILE, let past the SSRF guard by
// PORTCULLIS_CIMD_ALLOW_HOSTS), shows its host on the consent page, and issues tokens to it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { http, baseUrl, managementToken, varDir } from './harness.mjs';
import { Browser, completeAuthorization, signInWithCode } from './browser.mjs';
import { startMcpServer } from './mcp-server-fixture.mjs';

const tlsDir = process.env.PORTCULLIS_TEST_TLS_DIR ?? path.join(varDir, 'test-tls');
const port = Number(process.env.PORTCULLIS_TEST_CIMD_PORT ?? 18443);
const origin = `https://127.0.0.1:${port}`;
const REDIRECT = 'http://127.0.0.1:3000/callback';

// The documents the test's client host serves, by path, and how often each was fetched.
const documents = new Map();
const hits = new Map();
let docServer;
let mcp;
let resource;
let admin;

function serve(pathname, body, headers = {}) {
  documents.set(pathname, { body: typeof body === 'string' ? body : JSON.stringify(body), headers });
  return `${origin}${pathname}`;
}

before(async () => {
  docServer = https.createServer({ key: readFileSync(path.join(tlsDir, 'server.key')), cert: readFileSync(path.join(tlsDir, 'server.pem')) }, (req, res) => {
    hits.set(req.url, (hits.get(req.url) ?? 0) + 1);
    const doc = documents.get(req.url);
    if (!doc) return res.writeHead(404).end();
    res.writeHead(doc.headers[':status'] ?? 200, { 'content-type': 'application/json', ...Object.fromEntries(Object.entries(doc.headers).filter(([k]) => !k.startsWith(':'))) });
    res.end(doc.body);
  });
  await new Promise((r) => docServer.listen(port, '127.0.0.1', r));
  mcp = await startMcpServer({ baseUrl });
  admin = { authorization: `Bearer ${await managementToken()}` };
  const r = await http('/api/v1/resources', { method: 'POST', headers: admin, json: {
    name: 'CIMD test server', server_url: mcp.state.url, dcr_enabled: false, cimd_enabled: true,
    scopes: [{ name: 'demo:read', description: 'See who you are' }, { name: 'demo:write', description: 'Write notes' }] } });
  assert.equal(r.status, 201, r.text);
  resource = r.json;
  mcp.state.issuer = `${baseUrl}/resources/${resource.id}`;
});

after(async () => {
  await mcp?.close();
  docServer?.closeAllConnections();
  await new Promise((r) => docServer?.close(r));
});

function authorizeUrl(clientId, { withResource = true, redirect = REDIRECT } = {}) {
  const verifier = randomBytes(32).toString('base64url');
  const u = new URL(`${baseUrl}/oauth/authorize`);
  const p = { response_type: 'code', client_id: clientId, redirect_uri: redirect, state: 's1',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' };
  if (withResource) p.resource = resource.server_url;
  for (const [k, v] of Object.entries(p)) u.searchParams.set(k, v);
  return { url: u.href, verifier };
}

test('the MCP SDK client registers nothing: its document URL is its client_id', async () => {
  const url = serve('/clients/sdk.json', { client_id: `${origin}/clients/sdk.json`, client_name: 'SDK over CIMD',
    redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' },
  { 'cache-control': 'max-age=600' });
  const browser = new Browser();
  const provider = {
    clientMetadataUrl: url,
    get redirectUrl() { return REDIRECT; },
    get clientMetadata() { return { client_name: 'SDK over CIMD', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] }; },
    clientInformation() { return this._client; },
    saveClientInformation(c) { this._client = c; },
    tokens() { return this._tokens; },
    saveTokens(t) { this._tokens = t; },
    saveCodeVerifier(v) { this._verifier = v; },
    codeVerifier() { return this._verifier; },
    async redirectToAuthorization(authUrl) {
      this.authUrl = authUrl;
      let page = await browser.follow(authUrl.href);
      page = await signInWithCode(browser, page, `cimd-${randomBytes(3).toString('hex')}@example.com`);
      // The consent page names the client by its document's host.
      assert.match(page.html, /127\.0\.0\.1/);
      assert.match(page.html, /SDK over CIMD/);
      page = await browser.submit(page, 'decision', { decision: 'allow' });
      this.code = new URL(page.location).searchParams.get('code');
    },
  };
  let client;
  for (let attempt = 0; attempt < 3 && !client; attempt++) {
    const transport = new StreamableHTTPClientTransport(new URL(mcp.state.url), { authProvider: provider });
    const c = new Client({ name: 'cimd-e2e', version: '1.0.0' });
    try {
      await c.connect(transport);
      client = c;
    } catch (e) {
      if (!(e instanceof UnauthorizedError)) throw e;
      await transport.finishAuth(provider.code);
    }
  }
  assert.ok(client, 'connected');
  assert.equal(new URL(provider.authUrl).searchParams.get('client_id'), url, 'the SDK chose CIMD, not DCR');
  const who = await client.callTool({ name: 'whoami', arguments: {} });
  assert.equal(JSON.parse(who.content[0].text).client_id, url);
  assert.equal(hits.get('/clients/sdk.json'), 1, 'fetched once, then served from the cache');
  await client.close();
});

test('the seed form: /.well-known/client-configuration whose client_id is the origin', async () => {
  const url = serve('/.well-known/client-configuration', { client_id: origin, client_name: 'Seed-form client', redirect_uris: [REDIRECT] });
  const a = authorizeUrl(url);
  const page = await completeAuthorization(new Browser(), a.url, `seed-${randomBytes(3).toString('hex')}@example.com`);
  const code = new URL(page.location).searchParams.get('code');
  const t = await http('/oauth/token', { method: 'POST', form: { grant_type: 'authorization_code', code, code_verifier: a.verifier, redirect_uri: REDIRECT, client_id: url } });
  assert.equal(t.status, 200, t.text);
});

test('bad documents and requests end on a 400 page, never a redirect, and failures are not cached', async () => {
  const cases = [
    [serve('/clients/mismatch.json', { client_id: `${origin}/clients/other.json`, client_name: 'x', redirect_uris: [REDIRECT] }), {}],
    [serve('/clients/no-redirects.json', { client_id: `${origin}/clients/no-redirects.json`, client_name: 'x' }), {}],
    [serve('/clients/secret.json', { client_id: `${origin}/clients/secret.json`, client_name: 'x', redirect_uris: [REDIRECT], client_secret: 's' }), {}],
    [serve('/clients/error.json', { client_id: `${origin}/clients/error.json`, client_name: 'x', redirect_uris: [REDIRECT] }, { ':status': 500 }), {}],
    [serve('/clients/moved.json', '', { ':status': 302, location: `${origin}/clients/sdk.json` }), {}],
    [serve('/clients/good.json', { client_id: `${origin}/clients/good.json`, client_name: 'x', redirect_uris: [REDIRECT] }), { withResource: false }],
    [`${origin}/clients/good.json`, { redirect: 'http://127.0.0.1:3000/elsewhere' }],
    ['https://127.0.0.2:18443/clients/x.json', {}],
  ];
  for (const [clientId, opts] of cases) {
    const r = await new Browser().request(authorizeUrl(clientId, opts).url);
    assert.equal(r.status, 400, `${clientId} ${JSON.stringify(opts)}: ${r.status} ${r.location ?? ''}`);
    assert.equal(r.location, undefined);
    assert.match(r.headers.get('content-type'), /text\/html/);
  }
  // The failed fetch of error.json was not cached: fixed, it works at once.
  serve('/clients/error.json', { client_id: `${origin}/clients/error.json`, client_name: 'x', redirect_uris: [REDIRECT] });
  const fixed = await new Browser().request(authorizeUrl(`${origin}/clients/error.json`).url);
  assert.equal(fixed.status, 303, fixed.html.slice(0, 300));
  // A resource with CIMD off refuses document clients.
  const off = await http('/api/v1/resources', { method: 'POST', headers: admin, json: {
    name: 'No CIMD', server_url: `https://nocimd-${randomBytes(3).toString('hex')}.test/mcp`, cimd_enabled: false, scopes: [] } });
  const u = new URL(authorizeUrl(`${origin}/clients/good.json`).url);
  u.searchParams.set('resource', off.json.server_url);
  assert.equal((await new Browser().request(u.href)).status, 400);
});
