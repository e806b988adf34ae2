// The demo MCP server of contract §12 (portcullis-demo-mcp, started by scripts/run-local on
// PORTCULLIS_DEMO_MCP_PORT): the official MCP SDK client signs in and steps up against it;
// plain requests check the streamable-HTTP transport rules, the JSON-RPC errors, version
// negotiation, every row of seed §7 (contract §6) at the server's own door, and DPoP.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { env, baseUrl, http, managementToken, sleep, assertNoNulls } from './harness.mjs';
import { mintAccessToken, sqlRows } from './mcp-nginx.mjs';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { ScriptedProvider, connect, withAuth } from './sdk-client.mjs';
import { startMcpServer } from './mcp-server-fixture.mjs';
import { Browser, completeAuthorization } from './browser.mjs';

const mcpUrl = env.PORTCULLIS_DEMO_MCP_URL;
const resourceId = env.PORTCULLIS_DEMO_RESOURCE_ID;
const issuer = `${baseUrl}/resources/${resourceId}`;
const origin = new URL(mcpUrl).origin;
const prmUrl = `${origin}/.well-known/oauth-protected-resource/mcp`;
const VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const email = () => `demo-${randomBytes(4).toString('hex')}@example.com`;

let readToken; // demo:read
let fullToken; // demo:read demo:write

// An access token for the MCP server at `serverUrl` with `scope`, obtained the way the SDK
// gets one (metadata discovery, DCR, PKCE, sign-in, consent, code exchange); no MCP request.
async function accessToken(serverUrl, { issuer: iss, email: who, scope }) {
  const provider = new ScriptedProvider(who, { issuer: () => iss, grantTypes: ['authorization_code'] });
  assert.equal(await auth(provider, { serverUrl, scope }), 'REDIRECT');
  assert.equal(await auth(provider, { serverUrl, scope, authorizationCode: provider.code }), 'AUTHORIZED');
  return { token: provider.tokens().access_token, provider };
}

// A POST (by default) to the demo server as an MCP client sends it.
async function rpc(body, { token, headers = {}, method = 'POST' } = {}) {
  const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers };
  if (token) h.authorization = `Bearer ${token}`;
  for (const [k, v] of Object.entries(h)) if (v === undefined) delete h[k];
  const payload = method === 'POST' ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined;
  const res = await fetch(mcpUrl, { method, headers: h, body: payload });
  const text = await res.text();
  let json;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
  return { status: res.status, headers: res.headers, text, json };
}
const call = (id, method, params) => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });

before(async () => {
  assert.ok(mcpUrl && resourceId, 'scripts/run-local wrote PORTCULLIS_DEMO_MCP_URL and PORTCULLIS_DEMO_RESOURCE_ID');
  readToken = (await accessToken(mcpUrl, { issuer, email: email(), scope: 'demo:read' })).token;
  fullToken = (await accessToken(mcpUrl, { issuer, email: email(), scope: 'demo:read demo:write' })).token;
});

test('run-local registered the demo resource; its metadata is public', async () => {
  assert.equal(mcpUrl, `http://127.0.0.1:${new URL(mcpUrl).port}/mcp`);
  const admin = { authorization: `Bearer ${await managementToken()}` };
  const r = await http(`/api/v1/resources/${resourceId}`, { headers: admin });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.server_url, mcpUrl);
  assert.equal(r.json.dcr_enabled, true);
  assert.equal(r.json.cimd_enabled, true);
  assert.deepEqual(r.json.scopes.map((s) => s.name), ['demo:read', 'demo:write']);
  for (const s of r.json.scopes) assert.ok(s.description.length > 0, `${s.name} has a description`);

  for (const url of [prmUrl, `${origin}/.well-known/oauth-protected-resource`]) {
    const res = await fetch(url);
    assert.equal(res.status, 200, url);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    const doc = await res.json();
    assertNoNulls(assert, doc);
    assert.deepEqual(doc, {
      resource: mcpUrl, authorization_servers: [issuer], bearer_methods_supported: ['header'],
      scopes_supported: ['demo:read', 'demo:write'],
    });
  }
  assert.equal((await fetch(`${origin}/.well-known/oauth-protected-resource/other`)).status, 404);
  assert.equal((await fetch(`${origin}/elsewhere`)).status, 404);
});

test('MCP SDK client: 401, discovery, DCR, sign-in, whoami, 403 on write_note, step-up, success', async () => {
  const who = email();
  const provider = new ScriptedProvider(who, { issuer: () => issuer, grantTypes: ['authorization_code'] });
  const session = await connect(mcpUrl, provider);
  assert.match(provider._client.client_id, /^dcr_/, 'registered by DCR');
  const first = new URL(provider.redirects[0]);
  assert.equal(first.origin + first.pathname, `${baseUrl}/oauth/authorize`);
  assert.equal(first.searchParams.get('resource'), mcpUrl);
  assert.equal(first.searchParams.get('scope'), 'demo:read', 'the scope of the 401 challenge');
  assert.equal(session.client.getServerVersion().name, 'portcullis-demo-mcp');

  const tools = await session.client.listTools();
  assert.deepEqual(tools.tools.map((t) => t.name), ['whoami', 'write_note']);
  const noteSchema = tools.tools[1].inputSchema;
  assert.equal(noteSchema.type, 'object');
  assert.equal(noteSchema.properties.text.type, 'string');
  assert.deepEqual(noteSchema.required, ['text']);

  const me = JSON.parse((await withAuth(provider, session, () => session.client.callTool({ name: 'whoami', arguments: {} }))).content[0].text);
  assert.match(me.sub, /^usr_[0-9a-z]{26}$/);
  assert.equal(me.email, who, 'the user who signed in');
  assert.equal(me.client_id, provider._client.client_id);
  assert.equal(me.scope, 'demo:read');
  assert.equal(provider.redirects.length, 1);

  // write_note needs demo:write: 403 insufficient_scope, the SDK re-authorizes for the scopes
  // of the challenge (what it had plus demo:write) and the call goes through.
  const note = await withAuth(provider, session, () => session.client.callTool({ name: 'write_note', arguments: { text: 'hello from the SDK' } }));
  assert.equal(note.isError, false);
  assert.equal(note.content[0].text, 'saved: hello from the SDK');
  assert.equal(provider.redirects.length, 2, 'stepped up through a second authorization');
  assert.equal(new URL(provider.redirects[1]).searchParams.get('scope'), 'demo:read demo:write');
  assert.equal(provider._tokens.scope.split(' ').sort().join(' '), 'demo:read demo:write');

  // The larger token still reads, as the same user.
  const again = JSON.parse((await session.client.callTool({ name: 'whoami', arguments: {} })).content[0].text);
  assert.deepEqual(again, { ...me, scope: provider._tokens.scope });
  await session.client.close();
});

test('initialize: the client\'s version when supported, else the latest', async () => {
  for (const version of [...VERSIONS, '2099-01-01', '2024-10-07']) {
    const r = await rpc(call(1, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } }), { token: readToken });
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers.get('content-type'), /^application\/json/);
    assert.equal(r.json.jsonrpc, '2.0');
    assert.equal(r.json.id, 1);
    assert.equal(r.json.result.protocolVersion, VERSIONS.includes(version) ? version : '2025-11-25', version);
    assert.deepEqual(r.json.result.capabilities, { tools: { listChanged: false } });
    assert.equal(r.json.result.serverInfo.name, 'portcullis-demo-mcp');
    assert.equal(r.headers.get('mcp-session-id'), null, 'stateless: no session');
  }
  const noVersion = await rpc(call('a', 'initialize', {}), { token: readToken });
  assert.equal(noVersion.json.error.code, -32602);
  assert.equal(noVersion.json.id, 'a');

  const initialized = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, { token: readToken, headers: { 'mcp-protocol-version': '2025-11-25' } });
  assert.equal(initialized.status, 202);
  assert.equal(initialized.text, '');
  const ping = await rpc(call(7, 'ping'), { token: readToken, headers: { 'mcp-protocol-version': '2025-11-25' } });
  assert.deepEqual(ping.json, { jsonrpc: '2.0', id: 7, result: {} });
});

test('JSON-RPC errors: parse error, invalid request, unknown method, unknown tool, bad arguments', async () => {
  const opts = { token: fullToken, headers: { 'mcp-protocol-version': '2025-11-25' } };
  const parse = await rpc('{"jsonrpc": "2.0", "id": 1, "method": ', opts);
  assert.equal(parse.status, 400);
  assert.equal(parse.json.error.code, -32700);
  assert.equal('id' in parse.json, false, 'no id could be read');

  for (const bad of [{ jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: null, method: 'ping' }, { jsonrpc: '2.0', id: 1, method: 5 }, { jsonrpc: '2.0', id: 1, method: 'ping', params: [1] }, '[]', [1]]) {
    const r = await rpc(bad, opts);
    assert.equal(r.status, 400, JSON.stringify(bad));
    assert.equal(r.json.error.code, -32600, JSON.stringify(bad));
  }

  const unknown = await rpc(call(2, 'resources/list'), opts);
  assert.equal(unknown.status, 200);
  assert.equal(unknown.json.id, 2);
  assert.equal(unknown.json.error.code, -32601);

  const noTool = await rpc(call(3, 'tools/call', { name: 'rm_rf', arguments: {} }), opts);
  assert.equal(noTool.json.error.code, -32602);
  const notObject = await rpc(call(4, 'tools/call', { name: 'write_note', arguments: 'hi' }), opts);
  assert.equal(notObject.json.error.code, -32602);
  // Input validation failures are tool execution errors (MCP 2025-11-25), for the model to fix.
  for (const args of [{}, { text: 5 }, { text: '' }, { text: 'x', extra: 1 }, { text: 'x'.repeat(10001) }]) {
    const r = await rpc(call(5, 'tools/call', { name: 'write_note', arguments: args }), opts);
    assert.equal(r.status, 200);
    assert.equal(r.json.result.isError, true, JSON.stringify(args).slice(0, 50));
    assert.equal(r.json.result.content[0].type, 'text');
  }
  const ok = await rpc(call(6, 'tools/call', { name: 'write_note', arguments: { text: 'ünïcödé' } }), opts);
  assert.deepEqual(ok.json.result, { content: [{ type: 'text', text: 'saved: ünïcödé' }], isError: false });
});

test('batches exist only in 2025-03-26 (and without a version header, which means 2025-03-26)', async () => {
  for (const headers of [{ 'mcp-protocol-version': '2025-03-26' }, {}]) {
    const r = await rpc([call(1, 'ping'), { jsonrpc: '2.0', method: 'notifications/initialized' }, call(2, 'nope'), { bad: true }], { token: fullToken, headers });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.length, 3);
    assert.deepEqual(r.json[0], { jsonrpc: '2.0', id: 1, result: {} });
    assert.equal(r.json[1].error.code, -32601);
    assert.equal(r.json[2].error.code, -32600);
    const init = await rpc([call(3, 'initialize', { protocolVersion: '2025-03-26' })], { token: fullToken, headers });
    assert.equal(init.json[0].error.code, -32600, 'initialize is never batched');
    const onlyNotes = await rpc([{ jsonrpc: '2.0', method: 'notifications/initialized' }], { token: fullToken, headers });
    assert.equal(onlyNotes.status, 202);
  }
  const later = await rpc([call(1, 'ping')], { token: fullToken, headers: { 'mcp-protocol-version': '2025-06-18' } });
  assert.equal(later.status, 400);
  assert.equal(later.json.error.code, -32600);
});

test('transport rules: GET and DELETE 405, Accept, Content-Type, MCP-Protocol-Version, Origin', async () => {
  for (const method of ['GET', 'DELETE']) {
    const r = await rpc(undefined, { method, token: fullToken, headers: { accept: 'text/event-stream', 'content-type': undefined } });
    assert.equal(r.status, 405, method);
    assert.match(r.headers.get('allow'), /POST/);
  }
  const body = call(1, 'ping');
  // (fetch sends "Accept: */*" when none is given, which admits both.)
  for (const accept of ['application/json', 'text/event-stream', 'text/plain', 'application/json, text/event-stream;q=0', 'text/html']) {
    const r = await rpc(body, { token: fullToken, headers: { accept } });
    assert.equal(r.status, 406, `Accept: ${accept}`);
    assert.equal(r.json.error.code, -32600);
  }
  for (const accept of ['*/*', 'application/*, text/*', 'text/event-stream; q=0.5, application/json']) {
    assert.equal((await rpc(body, { token: fullToken, headers: { accept } })).status, 200, `Accept: ${accept}`);
  }
  assert.equal((await rpc(body, { token: fullToken, headers: { 'content-type': 'text/plain' } })).status, 415);

  for (const version of VERSIONS) {
    assert.equal((await rpc(body, { token: fullToken, headers: { 'mcp-protocol-version': version } })).status, 200, version);
  }
  for (const version of ['2099-01-01', 'latest', '']) {
    const r = await rpc(body, { token: fullToken, headers: { 'mcp-protocol-version': version } });
    assert.equal(r.status, 400, `MCP-Protocol-Version: ${version}`);
    assert.equal(r.json.error.code, -32600);
  }

  // DNS rebinding: a page of another origin is refused before its token is even looked at.
  for (const bad of ['http://evil.example', 'null', `${origin}.evil.example`, 'http://localhost:1', `${origin}/x`]) {
    const r = await rpc(body, { token: fullToken, headers: { origin: bad } });
    assert.equal(r.status, 403, `Origin: ${bad}`);
    assert.equal(r.json.error.code, -32600);
    assert.equal(r.headers.get('www-authenticate'), null);
  }
  assert.equal((await rpc(body, { headers: { origin: 'http://evil.example' } })).status, 403);
  assert.equal((await rpc(body, { token: fullToken, headers: { origin } })).status, 200);
});

// Seed §7 at the demo server's door (contract §6).
test('no token, a non-Bearer header, a bad signature, another resource\'s token, a revoked token: 401', async () => {
  const body = call(1, 'tools/call', { name: 'whoami', arguments: {} });
  const none = await rpc(body);
  assert.equal(none.status, 401);
  assert.equal(none.headers.get('www-authenticate'), `Bearer scope="demo:read", resource_metadata="${prmUrl}"`);
  const basicAuth = await rpc(body, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
  assert.equal(basicAuth.status, 401);
  assert.equal(basicAuth.headers.get('www-authenticate'), `Bearer scope="demo:read", resource_metadata="${prmUrl}"`);

  const invalid = `Bearer error="invalid_token", scope="demo:read", resource_metadata="${prmUrl}"`;
  const [h, p, s] = fullToken.split('.');
  const forged = `${h}.${p}.${s.slice(0, -4)}${s.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
  const claims = JSON.parse(Buffer.from(p, 'base64url'));
  const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, scope: 'demo:read demo:write admin' })).toString('base64url')}.${s}`;
  for (const [name, token] of [['bad signature', forged], ['tampered claims', tampered], ['garbage', 'not-a-jwt'], ['empty', '']]) {
    const r = await rpc(body, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 401, name);
    assert.equal(r.headers.get('www-authenticate'), invalid, name);
    assert.equal(r.json.error, 'invalid_token', name);
  }

  // A token Portcullis issued, but for another MCP server (another resource: other aud, iss).
  const other = await startMcpServer({ baseUrl });
  try {
    const admin = { authorization: `Bearer ${await managementToken()}` };
    const created = await http('/api/v1/resources', {
      method: 'POST', headers: admin,
      json: { name: 'Another MCP server', server_url: other.state.url, scopes: [{ name: 'demo:read', description: 'Read' }] },
    });
    assert.equal(created.status, 201, created.text);
    other.state.issuer = `${baseUrl}/resources/${created.json.id}`;
    const foreign = await accessToken(other.state.url, { issuer: other.state.issuer, email: email(), scope: 'demo:read' });
    const r = await rpc(body, { token: foreign.token });
    assert.equal(r.status, 401, 'wrong audience');
    assert.equal(r.headers.get('www-authenticate'), invalid);
  } finally {
    await other.close();
  }

  // Revoked (RFC 7009 by its own client): the deny-list refuses it before it expires.
  const { token, provider } = await accessToken(mcpUrl, { issuer, email: email(), scope: 'demo:read' });
  assert.equal((await rpc(body, { token })).status, 200);
  const revoked = await http('/oauth/revoke', { method: 'POST', form: { token, client_id: provider.clientInformation().client_id } });
  assert.equal(revoked.status, 200, revoked.text);
  // Every worker re-reads the deny-list at least once a second (PORTCULLIS_VALIDATOR_DENYLIST_SYNC_MS).
  let later;
  for (let i = 0; i < 30; i++) {
    later = await rpc(body, { token });
    if (later.status === 401) break;
    await sleep(200);
  }
  assert.equal(later.status, 401);
  assert.equal(later.headers.get('www-authenticate'), invalid);
});

test('a valid token without the tool\'s scope: 403 with the exact body and challenge', async () => {
  const r = await rpc(call(9, 'tools/call', { name: 'write_note', arguments: { text: 'x' } }), { token: readToken });
  assert.equal(r.status, 403);
  assert.match(r.headers.get('content-type'), /^application\/json/);
  assert.equal(r.text, '{"error":"insufficient_scope","error_description":"Required scope: demo:write"}');
  assert.equal(r.headers.get('www-authenticate'),
    `Bearer error="insufficient_scope", scope="demo:read demo:write", resource_metadata="${prmUrl}"`);
  // What the token allows still works.
  const me = await rpc(call(10, 'tools/call', { name: 'whoami', arguments: {} }), { token: readToken });
  assert.equal(me.status, 200);
  assert.equal(JSON.parse(me.json.result.content[0].text).scope, 'demo:read');
});

// Tokens signed with the stack's own key but refused for what they say: expired (beyond the
// 60 s leeway), not yet valid, another issuer, another type.
test('an expired, a not-yet-valid, a foreign-issuer and a wrong-typ token: 401', async () => {
  const resource = { id: resourceId, server_url: mcpUrl };
  const now = Math.floor(Date.now() / 1000);
  const body = call(1, 'ping');
  const good = await mintAccessToken(resource, { scope: 'demo:read' });
  assert.equal((await rpc(body, { token: good })).status, 200, 'the minted token itself is good');
  const invalid = `Bearer error="invalid_token", scope="demo:read", resource_metadata="${prmUrl}"`;
  for (const [name, token] of [
    ['expired', await mintAccessToken(resource, { iat: now - 3600, nbf: now - 3600, exp: now - 120 })],
    ['not yet valid', await mintAccessToken(resource, { nbf: now + 600 })],
    ['another issuer', await mintAccessToken(resource, { iss: baseUrl })],
    ['an array audience', await mintAccessToken(resource, { aud: [mcpUrl, 'https://other.example/mcp'] })],
    ['no jti', await mintAccessToken(resource, { jti: undefined })],
    ['typ JWT', await mintAccessToken(resource, {}, { typ: 'JWT' })],
  ]) {
    const r = await rpc(body, { token });
    assert.equal(r.status, 401, name);
    assert.equal(r.headers.get('www-authenticate'), invalid, name);
  }
});

test('every decision lands in the access log: token.validated / token.validation_failed events', async () => {
  const resource = { id: resourceId, server_url: mcpUrl };
  const sub = `usr_demo${randomBytes(4).toString('hex')}`;
  const token = await mintAccessToken(resource, { sub, scope: 'demo:read' });
  const whoami = call(1, 'tools/call', { name: 'whoami', arguments: {} });
  const note = call(2, 'tools/call', { name: 'write_note', arguments: { text: 'x' } });
  assert.equal((await rpc(whoami, { token })).status, 200);
  assert.equal((await rpc(note, { token })).status, 403);
  // Written in batches, at most once a second per worker, on a later request: keep a trickle
  // of requests going until they show up.
  const eventsOf = (type, where) => sqlRows(`SELECT user_id, client_id, resource_id, data FROM events WHERE type = '${type}' AND ${where}`)
    .map(([user_id, client_id, resource_id, data]) => ({ user_id, client_id, resource_id, data: JSON.parse(data) }));
  let events = [];
  for (let i = 0; i < 40 && events.length < 2; i++) {
    await sleep(250);
    await rpc(call(3, 'ping'));
    events = eventsOf('token.validated', `user_id = '${sub}'`);
  }
  const allowed = events.find((e) => e.data.result === 'allowed');
  const denied = events.find((e) => e.data.result === 'insufficient_scope');
  assert.ok(allowed && denied, JSON.stringify(events));
  assert.equal(allowed.resource_id, resourceId);
  assert.equal(allowed.data.scopes_required, 'demo:read');
  assert.equal(denied.data.scopes_required, 'demo:write');
  assert.equal(denied.data.scopes_granted, 'demo:read');
  const failed = eventsOf('token.validation_failed', `resource_id = '${resourceId}'`);
  assert.ok(failed.some((e) => e.data.reason === 'no_token'), JSON.stringify(failed));
});

test('DPoP: a bound token works only with the DPoP scheme and a fresh proof for this server (RFC 9449)', async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  const proof = ({ htu = mcpUrl, htm = 'POST', token } = {}) => {
    const claims = { htm, htu, iat: Math.floor(Date.now() / 1000), jti: randomUUID() };
    if (token) claims.ath = createHash('sha256').update(token).digest('base64url');
    return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(privateKey);
  };
  // A public client of the demo resource, through DCR, sign-in and consent; a proof at the token endpoint.
  const redirect = 'http://127.0.0.1:3000/callback';
  const reg = await http(`/resources/${resourceId}/client_register`, {
    method: 'POST', json: { client_name: 'DPoP demo', redirect_uris: [redirect], token_endpoint_auth_method: 'none' },
  });
  assert.equal(reg.status, 201, reg.text);
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code', client_id: reg.json.client_id, redirect_uri: redirect, scope: 'demo:read', state: 's', resource: mcpUrl,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
  })) url.searchParams.set(k, v);
  const page = await completeAuthorization(new Browser(), url.href, email());
  const tokens = await http('/oauth/token', {
    method: 'POST',
    headers: { dpop: await proof({ htu: `${baseUrl}/oauth/token` }) },
    form: { grant_type: 'authorization_code', code: new URL(page.location).searchParams.get('code'), code_verifier: verifier, redirect_uri: redirect, client_id: reg.json.client_id },
  });
  assert.equal(tokens.status, 200, tokens.text);
  assert.equal(tokens.json.token_type, 'DPoP');
  const token = tokens.json.access_token;
  const whoami = call(1, 'tools/call', { name: 'whoami', arguments: {} });
  const withProof = async (p) => rpc(whoami, { headers: { authorization: `DPoP ${token}`, dpop: p } });

  const good = await proof({ token });
  const ok = await withProof(good);
  assert.equal(ok.status, 200, ok.text);
  assert.equal(JSON.parse(ok.json.result.content[0].text).client_id, reg.json.client_id);

  const refusals = {
    'the bound token as Bearer': await rpc(whoami, { token }),
    'no proof': await rpc(whoami, { headers: { authorization: `DPoP ${token}` } }),
    'a replayed proof': await withProof(good),
    'a proof for another URL': await withProof(await proof({ token, htu: `${origin}/other` })),
    'a proof for another method': await withProof(await proof({ token, htm: 'GET' })),
  };
  for (const [what, r] of Object.entries(refusals)) {
    assert.equal(r.status, 401, `${what}: ${r.text}`);
    assert.match(r.headers.get('www-authenticate'), /resource_metadata=/, what);
  }
});
