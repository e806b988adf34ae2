// The official MCP TypeScript SDK client — code no one here wrote — meets Portcullis: it gets
// 401 from a protected MCP server, discovers the resource metadata and Portcullis' metadata,
// registers by DCR, sends the user through sign-in and consent, exchanges the code, calls a
// tool, steps up on 403 insufficient_scope, and refreshes. Tokens are verified by the MCP
// server with jose against /keys.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { http, baseUrl, managementToken } from './harness.mjs';
import { ScriptedProvider, connect as connectTo, withAuth } from './sdk-client.mjs';
import { startMcpServer } from './mcp-server-fixture.mjs';

let mcp;
let resource;

before(async () => {
  mcp = await startMcpServer({ baseUrl });
  const admin = { authorization: `Bearer ${await managementToken()}` };
  const r = await http('/api/v1/resources', {
    method: 'POST', headers: admin,
    json: { name: 'SDK test server', server_url: mcp.state.url, dcr_enabled: true, cimd_enabled: true,
      scopes: [{ name: 'demo:read', description: 'See who you are' }, { name: 'demo:write', description: 'Write notes' }] },
  });
  assert.equal(r.status, 201, r.text);
  resource = r.json;
  mcp.state.issuer = `${baseUrl}/resources/${resource.id}`;
});

after(() => mcp?.close());

const issuer = () => `${baseUrl}/resources/${resource.id}`;
const connect = (provider) => connectTo(mcp.state.url, provider);

test('MCP SDK client: discovery, DCR, sign-in, consent, token, tool call, step-up on 403', async () => {
  const provider = new ScriptedProvider(`sdk-${randomBytes(4).toString('hex')}@example.com`, { issuer, grantTypes: ['authorization_code'] });
  const session = await connect(provider);
  assert.match(provider._client.client_id, /^dcr_/, 'registered by DCR');
  const first = new URL(provider.redirects[0]);
  assert.equal(first.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(first.searchParams.get('resource'), mcp.state.url);
  assert.equal(first.searchParams.get('scope'), 'demo:read', 'the scope of the 401 challenge');
  assert.equal(provider._tokens.refresh_token, undefined, 'no refresh token for a client without the grant');

  const who = await withAuth(provider, session, () => session.client.callTool({ name: 'whoami', arguments: {} }));
  const me = JSON.parse(who.content[0].text);
  assert.match(me.sub, /^usr_/);
  assert.equal(me.client_id, provider._client.client_id);
  assert.equal(me.scope, 'demo:read');

  // write_note needs demo:write: 403 insufficient_scope, the SDK re-authorizes with the larger
  // scope, the consent page asks for the new scope, and the call succeeds.
  const note = await withAuth(provider, session, () => session.client.callTool({ name: 'write_note', arguments: { text: 'hi' } }));
  assert.equal(note.content[0].text, 'saved: hi');
  assert.equal(provider.redirects.length, 2, 'stepped up through a second authorization');
  assert.equal(new URL(provider.redirects[1]).searchParams.get('scope'), 'demo:read demo:write');
  assert.equal(provider._tokens.scope.split(' ').sort().join(' '), 'demo:read demo:write');
  await session.client.close();
});

test('MCP SDK client: a rejected access token is replaced through the rotating refresh token', async () => {
  const provider = new ScriptedProvider(`sdk-${randomBytes(4).toString('hex')}@example.com`, { issuer });
  const session = await connect(provider);
  const firstRefresh = provider._tokens.refresh_token;
  assert.ok(firstRefresh, 'a refresh token for a client with the grant');
  const who = await withAuth(provider, session, () => session.client.callTool({ name: 'whoami', arguments: {} }));
  const me = JSON.parse(who.content[0].text);
  // The MCP server now rejects the access token (401): the SDK refreshes, silently.
  provider._tokens = { ...provider._tokens, access_token: 'not.a.token' };
  const again = await withAuth(provider, session, () => session.client.callTool({ name: 'whoami', arguments: {} }));
  assert.equal(JSON.parse(again.content[0].text).sub, me.sub);
  assert.notEqual(provider._tokens.refresh_token, firstRefresh, 'the refresh token rotated');
  assert.equal(provider.redirects.length, 1, 'no second trip through the browser');
  await session.client.close();
});
