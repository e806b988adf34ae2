// A failed key-ring refresh never turns a good token into "invalid". Each worker keeps its own
// key ring, refreshed from the database when a request finds it stale (lib/keys/key_ring.h), so
// an idle worker's ring may lack a key rotated in since it last read it. While MariaDB is down
// such a worker cannot load that key: a token it signed is answered "retry" (503 in the
// family's shape, with Retry-After), never 401 or active:false, and is accepted again as soon
// as the database is back.
//
// The idle worker is made deterministic with a private one-worker portcullis-wellknown pool
// (the stack's binary and configuration, its own socket) behind a private nginx that protects
// an upstream with the validator snippets: the test alone decides when that worker sees a
// request, so its ring is the one it read before the rotation.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { openSync, closeSync, existsSync, rmSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { http, env, managementToken, cli, runLocal, sleep, binDir, configFile, varDir } from './harness.mjs';
import { startProtectedNginx, validateLocation, freePort, mintAccessToken } from './mcp-nginx.mjs';

const cleanups = [];
after(async () => {
  for (const f of cleanups.reverse()) await f();
});

// portcullis-wellknown with one worker on a socket of its own, configured as the stack's pools
// are (the config file, no PORTCULLIS_* of the test's environment) but for its metrics block,
// which would otherwise replace the stack's wellknown pool's (lib/core/telemetry.h).
async function startPrivatePool() {
  const socket = path.join(varDir, 'run', `keyring-outage-${process.pid}.sock`);
  rmSync(socket, { force: true });
  const metrics = path.join(varDir, 'keyring-outage-metrics');
  mkdirSync(metrics, { recursive: true });
  const environment = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PORTCULLIS_')));
  environment.PORTCULLIS_METRICS_DIR = metrics;
  const log = openSync(path.join(varDir, 'log', 'keyring-outage-wellknown.log'), 'a');
  const child = spawn(path.join(binDir, 'portcullis-wellknown'),
    ['--config', configFile, '--socket', socket, '--workers', '1'],
    { env: environment, stdio: ['ignore', log, log] });
  closeSync(log);
  const exited = new Promise((r) => child.once('exit', r));
  const until = Date.now() + 10000;
  while (!existsSync(socket)) {
    assert.ok(Date.now() < until, 'the private wellknown pool made its socket');
    assert.equal(child.exitCode, null, 'the private wellknown pool is running');
    await sleep(50);
  }
  return {
    socket,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');  // the master stops its worker
      const killer = setTimeout(() => child.kill('SIGKILL'), 15000);
      await exited;
      clearTimeout(killer);
    },
  };
}

async function upstreamServer() {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ sub: req.headers['x-portcullis-sub'] ?? null }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { port: server.address().port, close: () => new Promise((r) => server.close(r)) };
}

// A 503 that tells the client to retry, in the OAuth error shape (RFC 6749 §5.2 / RFC 6750).
function assertRetry(r, what) {
  assert.equal(r.status, 503, `${what}: ${r.status} ${r.text}`);
  assert.ok(Number(r.headers.get('retry-after')) >= 1, `${what}: Retry-After`);
  assert.equal(r.json?.error, 'temporarily_unavailable', `${what}: ${r.text}`);
}

async function request(url, { method = 'GET', headers = {}, body } = {}) {
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let json;
  try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
  return { status: res.status, headers: res.headers, text, json };
}

test('MariaDB down: a good token signed with a key rotated in since a worker read its ring is 503 (retry) everywhere, never invalid; accepted once MariaDB is back', async () => {
  const admin = { authorization: `Bearer ${await managementToken()}` };
  // The MCP server the private nginx protects, and its resource.
  const port = await freePort();
  const mcpPath = `/mcp-${randomBytes(4).toString('hex')}`;
  const created = await http('/api/v1/resources', {
    method: 'POST', headers: admin,
    json: { name: 'Key ring outage', server_url: `http://127.0.0.1:${port}${mcpPath}`, scopes: [{ name: 'demo:read', description: 'Read' }] },
  });
  assert.equal(created.status, 201, created.text);
  const resource = created.json;
  const upstream = await upstreamServer();
  cleanups.push(upstream.close);
  const pool = await startPrivatePool();
  cleanups.push(pool.stop);
  const nginx = await startProtectedNginx({
    port, resourceId: resource.id, socket: pool.socket, name: `keyring-outage-nginx-${port}`,
    serverBody: `${validateLocation('read', 'demo:read')}
        location ${mcpPath} {
            auth_request /_portcullis/auth/read;
            include portcullis/mcp-protect.conf;
            include portcullis/mcp-proxy-headers.conf;
            proxy_pass http://127.0.0.1:${upstream.port};
        }`,
  });
  cleanups.push(() => nginx.stop());
  const mcp = (token) => request(nginx.url + mcpPath, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{}' });
  const demo = (token) => request(env.PORTCULLIS_DEMO_MCP_URL, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  const demoResource = { id: env.PORTCULLIS_DEMO_RESOURCE_ID, server_url: env.PORTCULLIS_DEMO_MCP_URL };

  // The private worker reads its ring (and the resource) now, with the current key.
  const before = await mintAccessToken(resource);
  const oldKid = decodeProtectedHeader(before).kid;
  assert.equal((await mcp(before)).status, 200, 'a good token passes');

  // A new key, published now; it signs once the pre-publication window has passed. Nothing
  // reaches the private worker meanwhile: its ring stays the one read above, without the key.
  const out = cli('keys', 'rotate', 'RS256');
  const returned = Date.now();
  const newKid = out.match(/(key_[0-9a-z]{26}) \(RS256\)/)[1];
  const window = Number(process.env.PORTCULLIS_KEY_PREPUBLISH_SECONDS ?? 8);
  const refresh = Number(process.env.PORTCULLIS_KEYRING_REFRESH_SECONDS ?? 1);
  await sleep(returned + (window + refresh + 0.5) * 1000 - Date.now());
  const management = await managementToken();
  assert.equal(decodeProtectedHeader(management).kid, newKid, 'the token endpoint signs with the new key');
  const token = await mintAccessToken(resource);
  assert.equal(decodeProtectedHeader(token).kid, newKid);
  const demoToken = await mintAccessToken(demoResource);
  const oldKeyToken = await mintAccessToken(resource, {}, { kid: oldKid });  // not yet seen
  const bearer = { authorization: `Bearer ${management}` };
  const introspect = () => http('/oauth/introspect', { method: 'POST', headers: bearer, form: { token } });

  runLocal('db-stop');
  let restarted = false;
  cleanups.push(() => (restarted ? undefined : runLocal('db-start')));
  try {
    // The nginx auth_request validator (nginx/portcullis/mcp-server.conf answers its "cannot
    // decide" as 503 temporarily_unavailable).
    assertRetry(await mcp(token), 'the validator, through nginx');
    // A token of a key the worker's ring holds still passes: the ring is old, not gone.
    const ofOldKey = await mcp(oldKeyToken);
    assert.equal(ofOldKey.status, 200, ofOldKey.text);
    // The demo MCP server, which checks tokens itself with its worker's ring.
    assertRetry(await demo(demoToken), 'the demo MCP server');
    // Introspection: never active:false for a good token.
    assertRetry(await introspect(), 'introspection');
    // The management API: 503 in its problem shape.
    const api = await http(`/api/v1/resources/${resource.id}`, { headers: bearer });
    assert.equal(api.status, 503, api.text);
    assert.equal(api.json?.code, 'unavailable', api.text);
    assert.ok(api.headers.get('retry-after'));
  } finally {
    runLocal('db-start');
    restarted = true;
  }

  // Back: the same tokens are accepted, and the service is ready again.
  const until = Date.now() + 30000;
  while ((await http('/readyz')).status !== 200) {
    assert.ok(Date.now() < until, 'ready again after MariaDB started');
    await sleep(200);
  }
  await sleep(refresh * 1000 + 100);  // the rings' next refresh is due
  const passed = await mcp(token);
  assert.equal(passed.status, 200, passed.text);
  const seen = await demo(demoToken);
  assert.equal(seen.status, 200, seen.text);
  const answer = await introspect();
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.json.active, true);
  assert.equal(answer.json.client_id, 'dcr_minted');
  const api = await http(`/api/v1/resources/${resource.id}`, { headers: bearer });
  assert.equal(api.status, 200, api.text);
});
