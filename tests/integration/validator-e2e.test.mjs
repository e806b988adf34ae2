// End to end through nginx auth_request in front of an MCP server no one here wrote:
// @modelcontextprotocol/server-everything from npm, started by this test and reachable only
// through an nginx that protects it with Portcullis' snippets. The official MCP TypeScript SDK
// client gets 401, discovers the protected-resource metadata that the snippet serves, registers
// by DCR, signs in, consents, and calls a tool; the same token is refused with the seed's 403
// where a location needs a scope it lacks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { http, baseUrl, managementToken, env, repoDir } from './harness.mjs';
import { startProtectedNginx, validateLocation, waitForPort, freePort } from './mcp-nginx.mjs';
import { ScriptedProvider, connect, withAuth } from './sdk-client.mjs';

const port = Number(env.PORTCULLIS_BASE_URL.split(':').pop()) + 8;
const mcpPath = `/everything-${randomBytes(4).toString('hex')}`;
const serverUrl = `http://127.0.0.1:${port}${mcpPath}`;
let resource;
let everything;
let everythingPort;
let nginx;

before(async () => {
  const admin = { authorization: `Bearer ${await managementToken()}` };
  const r = await http('/api/v1/resources', {
    method: 'POST', headers: admin,
    json: { name: 'Everything server', server_url: serverUrl, dcr_enabled: true,
      scopes: [{ name: 'demo:read', description: 'Use the tools' }, { name: 'demo:write', description: 'Administer' }] },
  });
  assert.equal(r.status, 201, r.text);
  resource = r.json;

  everythingPort = await freePort();
  everything = spawn(process.execPath,
    [path.join(repoDir, 'tests', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'streamableHttp'],
    { env: { ...process.env, PORT: String(everythingPort) }, stdio: 'ignore' });
  await waitForPort(everythingPort, 10000);

  const protect = (scopes) => `
            auth_request /_portcullis/auth/${scopes};
            include portcullis/mcp-protect.conf;
            include portcullis/mcp-proxy-headers.conf;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_pass http://127.0.0.1:${everythingPort}/mcp;`;
  nginx = await startProtectedNginx({
    port, resourceId: resource.id, serverBody: `${validateLocation('read', 'demo:read')}${validateLocation('write', 'demo:write')}
        location = ${mcpPath} {${protect('read')}
        }
        location = ${mcpPath}/admin {${protect('write')}
        }`,
  });
});

after(() => {
  nginx?.stop();
  everything?.kill();
});

test('MCP SDK client → nginx auth_request → server-everything: 401, discovery, DCR, sign-in, tool call; 403 without the scope', async () => {
  // Without a token: 401 pointing at the metadata the snippet serves.
  const bare = await fetch(serverUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(bare.status, 401);
  assert.equal(bare.headers.get('www-authenticate'),
    `Bearer scope="demo:read", resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource${mcpPath}"`);

  const provider = new ScriptedProvider(`everything-${randomBytes(4).toString('hex')}@example.com`,
    { issuer: () => `${baseUrl}/resources/${resource.id}`, grantTypes: ['authorization_code'] });
  const session = await connect(serverUrl, provider);
  assert.match(provider._client.client_id, /^dcr_/, 'registered by DCR');
  const first = new URL(provider.redirects[0]);
  assert.equal(first.searchParams.get('resource'), serverUrl);
  assert.equal(first.searchParams.get('scope'), 'demo:read', 'the scope of the 401 challenge');
  assert.equal(session.client.getServerVersion()?.name?.includes('everything'), true, JSON.stringify(session.client.getServerVersion()));

  const tools = await withAuth(provider, session, () => session.client.listTools());
  assert.ok(tools.tools.some((t) => t.name === 'echo'));
  const echoed = await withAuth(provider, session, () => session.client.callTool({ name: 'echo', arguments: { message: 'through nginx' } }));
  assert.match(echoed.content[0].text, /through nginx/);

  // The same token where demo:write is required: the seed's 403.
  const denied = await fetch(`${serverUrl}/admin`, {
    method: 'POST',
    headers: { authorization: `Bearer ${provider._tokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(denied.status, 403);
  assert.equal(await denied.text(), '{"error":"insufficient_scope","error_description":"Required scope: demo:write"}');
  assert.equal(denied.headers.get('www-authenticate'),
    `Bearer error="insufficient_scope", scope="demo:write", resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource${mcpPath}"`);
  await session.client.close();
});
