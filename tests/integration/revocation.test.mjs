// Revocation that survives deletion (issue 9): every way a token's authority can end reaches the
// resource servers' deny-lists within the sync interval. Each test gets a real access token the
// way an MCP client does (the official SDK: discovery, DCR, sign-in, consent, code exchange),
// shows it accepted at the MCP server, does one thing, and shows the same token refused there.
// The grant rows that carry the revocation must outlive the deletion that caused it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { env, baseUrl, http, managementToken, sleep, dbQuery } from './harness.mjs';
import { startProtectedNginx, validateLocation, freePort } from './mcp-nginx.mjs';
import { ScriptedProvider } from './sdk-client.mjs';

const demoUrl = env.PORTCULLIS_DEMO_MCP_URL;
const demoResourceId = env.PORTCULLIS_DEMO_RESOURCE_ID;
const email = () => `revoke-${randomBytes(4).toString('hex')}@example.com`;
let adminHeaders;

before(async () => {
  adminHeaders = { authorization: `Bearer ${await managementToken()}` };
});

// Tokens for the MCP server at `serverUrl` (issuer of `resourceId`), obtained as the SDK does.
async function signIn(serverUrl, resourceId) {
  const provider = new ScriptedProvider(email(), { issuer: () => `${baseUrl}/resources/${resourceId}` });
  assert.equal(await auth(provider, { serverUrl, scope: 'demo:read' }), 'REDIRECT');
  assert.equal(await auth(provider, { serverUrl, scope: 'demo:read', authorizationCode: provider.code }), 'AUTHORIZED');
  const tokens = provider.tokens();
  assert.ok(tokens.access_token && tokens.refresh_token, 'an access and a refresh token');
  const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url'));
  return { ...tokens, clientId: provider.clientInformation().client_id, userId: claims.sub, grantId: claims.jti.split('.')[0] };
}

// One MCP tool call with the token: 200 when accepted, 401 when refused.
async function callWith(url, token) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
  });
  await res.text();
  return res.status;
}

// Validators re-read the deny-list every PORTCULLIS_VALIDATOR_DENYLIST_SYNC_MS (1 s in tests):
// wait up to a few syncs for the refusal, never longer.
async function refusedWithinSync(url, token) {
  let status;
  for (let i = 0; i < 25; i++) {
    status = await callWith(url, token);
    if (status === 401) return status;
    await sleep(200);
  }
  return status;
}

function grantRow(grantId) {
  assert.match(grantId, /^[A-Za-z0-9_-]+$/);
  return dbQuery(`SELECT revoked_at IS NOT NULL, revoke_reason FROM grants WHERE id = '${grantId}'`);
}

async function accepted(url, t) {
  assert.equal(await callWith(url, t.access_token), 200, 'the token works before');
}

// Signs in, shows the token accepted, runs `action` (expecting `status`), and shows the token
// refused at the demo MCP server within the sync, its grant revoked for `reason`.
async function refusedAfter(action, reason) {
  const t = await signIn(demoUrl, demoResourceId);
  await accepted(demoUrl, t);
  const { r, status } = await action(t);
  assert.equal(r.status, status, r.text);
  assert.equal(await refusedWithinSync(demoUrl, t.access_token), 401);
  assert.deepEqual(grantRow(t.grantId), [['1', reason]]);
  return t;
}

test('user deleted: the token is refused at the demo MCP server, the revoked grant row stays', async () => {
  const t = await refusedAfter(async (u) => ({ r: await http(`/api/v1/users/${u.userId}`, { method: 'DELETE', headers: adminHeaders }), status: 204 }), 'user_deleted');
  assert.deepEqual(dbQuery(`SELECT COUNT(*) FROM refresh_tokens WHERE grant_id = '${t.grantId}'`), [['0']]);
});

test('user deactivated: the token is refused at the demo MCP server', async () => {
  await refusedAfter(async (u) => ({ r: await http(`/api/v1/users/${u.userId}`, { method: 'PATCH', headers: adminHeaders, json: { active: false } }), status: 200 }), 'user_deactivated');
});

test('client deleted: the token is refused at the demo MCP server', async () => {
  await refusedAfter(async (u) => ({ r: await http(`/api/v1/resources/${demoResourceId}/clients/${u.clientId}`, { method: 'DELETE', headers: adminHeaders }), status: 204 }), 'client_deleted');
});

test('grant revoked (its refresh token revoked by the client, RFC 7009): the access token is refused', async () => {
  await refusedAfter(async (u) => ({ r: await http('/oauth/revoke', { method: 'POST', form: { token: u.refresh_token, token_type_hint: 'refresh_token', client_id: u.clientId } }), status: 200 }), 'revoked_by_client');
});

test('refresh-token reuse: every access token of the grant is refused, the newest included', async () => {
  const t = await signIn(demoUrl, demoResourceId);
  const refresh = (token) => http('/oauth/token', { method: 'POST', form: { grant_type: 'refresh_token', refresh_token: token, client_id: t.clientId } });
  const rotated = await refresh(t.refresh_token);
  assert.equal(rotated.status, 200, rotated.text);
  await accepted(demoUrl, rotated.json);
  const replay = await refresh(t.refresh_token);  // the old one again: reuse
  assert.equal(replay.status, 400, replay.text);
  assert.equal(replay.json.error, 'invalid_grant');
  assert.equal(await refusedWithinSync(demoUrl, rotated.json.access_token), 401);
  assert.equal(await refusedWithinSync(demoUrl, t.access_token), 401);
  assert.deepEqual(grantRow(t.grantId), [['1', 'refresh_reuse']]);
});

// Resource deletion at an MCP server protected by nginx auth_request (the demo server's own
// resource cannot be deleted under the other tests).
let nginx;
let upstream;
after(async () => {
  nginx?.stop();
  await new Promise((done) => (upstream ? upstream.close(done) : done()));
});

test('resource deleted: the token is refused at its MCP server behind nginx', async () => {
  const port = await freePort();
  const mcpPath = `/mcp-revoke-${randomBytes(4).toString('hex')}`;
  const serverUrl = `http://127.0.0.1:${port}${mcpPath}`;
  const created = await http('/api/v1/resources', {
    method: 'POST', headers: adminHeaders,
    json: { name: 'Revocation test server', server_url: serverUrl, dcr_enabled: true, scopes: [{ name: 'demo:read', description: 'Read' }] },
  });
  assert.equal(created.status, 201, created.text);
  upstream = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}');
  });
  await new Promise((done) => upstream.listen(0, '127.0.0.1', done));
  nginx = await startProtectedNginx({
    port, resourceId: created.json.id, name: `mcp-nginx-revoke-${port}`, serverBody: `${validateLocation('read', 'demo:read')}
        location = ${mcpPath} {
            auth_request /_portcullis/auth/read;
            include portcullis/mcp-protect.conf;
            include portcullis/mcp-proxy-headers.conf;
            proxy_pass http://127.0.0.1:${upstream.address().port};
        }`,
  });
  const t = await signIn(serverUrl, created.json.id);
  await accepted(serverUrl, t);
  const r = await http(`/api/v1/resources/${created.json.id}`, { method: 'DELETE', headers: adminHeaders });
  assert.equal(r.status, 204, r.text);
  // Each validator worker keeps the resource it loaded for 30 s; meanwhile the deny-list refuses
  // the token (401). A worker that reloads in between finds the resource gone and refuses every
  // request (503). Either way within the sync window, never 200 for the resource's 30 s.
  let status;
  for (let i = 0; i < 25; i++) {
    status = await callWith(serverUrl, t.access_token);
    if (status !== 200) break;
    await sleep(200);
  }
  assert.ok(status === 401 || status === 503, `refused, got ${status}`);
  assert.deepEqual(grantRow(t.grantId), [['1', 'resource_deleted']]);
});
