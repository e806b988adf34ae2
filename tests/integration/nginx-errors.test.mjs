// Errors produced by nginx itself reach clients in the path family's JSON shape (contract §0):
// OAuth (default), SCIM (/scim/) and the management API (/api/). Runs against the stack that
// scripts/test started; PORTCULLIS_TEST_ENV names its local.env.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';

function loadEnv(file) {
  const env = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2];
  }
  return env;
}

const envFile = process.env.PORTCULLIS_TEST_ENV;
assert.ok(envFile, 'PORTCULLIS_TEST_ENV must name the stack\'s local.env');
const base = new URL(loadEnv(envFile).PORTCULLIS_BASE_URL);

// One HTTP/1.1 exchange with node:http (full control over the body and its framing).
function request(method, path, { body, headers = {}, chunked = false } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method, path, headers, agent: false },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c) => { data += c; });
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: data }));
      });
    // nginx answers 413 before reading a too-large body and may close early: an EPIPE or
    // reset while we are still sending is expected, the response is what counts.
    req.on('error', (e) => (['EPIPE', 'ECONNRESET'].includes(e.code) ? null : reject(e)));
    if (body !== undefined) {
      if (!chunked) req.setHeader('Content-Length', body.length);
      req.write(body);
    }
    req.end();
  });
}

// Raw bytes over TCP, for requests node:http refuses to send.
function raw(bytes) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(base.port), base.hostname, () => sock.end(bytes));
    let data = '';
    sock.setEncoding('utf8');
    sock.on('data', (c) => { data += c; });
    sock.on('end', () => resolve(data));
    sock.on('error', reject);
  });
}

const twoMiB = Buffer.alloc(2 * 1024 * 1024, 0x61);

function assertOAuth(res, status, error) {
  assert.equal(res.status, status);
  assert.match(res.headers['content-type'], /^application\/json\b/);
  const body = JSON.parse(res.text);
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(body.error, error);
  assert.ok(body.error_description.length > 0);
}

function assertScim(res, status) {
  assert.equal(res.status, status);
  assert.match(res.headers['content-type'], /^application\/scim\+json\b/);
  const body = JSON.parse(res.text);
  assert.deepEqual(body.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
  assert.equal(body.status, String(status));
  assert.ok(body.detail.length > 0);
}

function assertProblem(res, status, code) {
  assert.equal(res.status, status);
  assert.match(res.headers['content-type'], /^application\/problem\+json\b/);
  const body = JSON.parse(res.text);
  assert.equal(body.type, 'about:blank');
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.ok(body.title.length > 0 && body.detail.length > 0);
}

test('an unrouted path is a 404 in the OAuth shape', async () => {
  for (const path of ['/nope', '/', '/index.html', '/oauth', '/sso', '/resources', '/.well-known']) {
    assertOAuth(await request('GET', path), 404, 'not_found');
  }
});

test('the bare /api and /scim prefixes are 404s in their family\'s shape, not redirects', async () => {
  assertProblem(await request('GET', '/api'), 404, 'not_found');
  assertScim(await request('GET', '/scim'), 404);
});

test('the internal error locations cannot be requested directly', async () => {
  assertOAuth(await request('GET', '/__portcullis_error/api'), 404, 'not_found');
});

test('a 2 MiB POST to SCIM is a 413 in the SCIM shape', async () => {
  const res = await request('POST', '/scim/v2/Users',
    { body: twoMiB, headers: { 'Content-Type': 'application/scim+json' } });
  assertScim(res, 413);
});

test('a 2 MiB POST to the management API is a 413 problem+json', async () => {
  const res = await request('POST', '/api/v1/resources',
    { body: twoMiB, headers: { 'Content-Type': 'application/json' } });
  assertProblem(res, 413, 'invalid_argument');
});

test('a 2 MiB chunked POST to the management API is a 413 problem+json', async () => {
  const res = await request('POST', '/api/v1/resources',
    { body: twoMiB, chunked: true, headers: { 'Content-Type': 'application/json' } });
  assertProblem(res, 413, 'invalid_argument');
});

test('a 2 MiB POST to OAuth endpoints is a 413 invalid_request', async () => {
  for (const path of ['/oauth/token', '/resources/res_01jd0000000000000000000000/client_register']) {
    const res = await request('POST', path,
      { body: twoMiB, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    assertOAuth(res, 413, 'invalid_request');
  }
});

test('a body just under 1 MiB is not refused by nginx', async () => {
  const res = await request('POST', '/api/v1/resources',
    { body: Buffer.alloc(1024 * 1024 - 1024, 0x61), headers: { 'Content-Type': 'application/json' } });
  assert.notEqual(res.status, 413);
});

test('an over-long URI is a 414 in JSON', async () => {
  const res = await request('GET', `/oauth/authorize?state=${'a'.repeat(70000)}`);
  assertOAuth(res, 414, 'invalid_request');
});

test('a malformed request is a 400 in its family\'s JSON, never HTML', async () => {
  const cases = [
    ['/oauth/token', 'application/json', (b) => assert.equal(b.error, 'invalid_request')],
    ['/api/v1/users', 'application/problem+json', (b) => assert.equal(b.code, 'invalid_argument')],
    ['/scim/v2/Users', 'application/scim+json', (b) => assert.equal(b.status, '400')],
  ];
  for (const [path, type, check] of cases) {
    // Two Host headers: nginx refuses the request itself.
    const text = await raw(`GET ${path} HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n`);
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.ok(text.toLowerCase().includes(`\r\ncontent-type: ${type}\r\n`), text);
    assert.doesNotMatch(text, /<html/i);
    check(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)));
  }
  // A request line nginx cannot parse has no path: the default (OAuth) shape.
  const text = await raw('BROKEN\r\n\r\n');
  assert.match(text, /^HTTP\/1\.1 400 /);
  assert.equal(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error, 'invalid_request');
});

test('the static probe is served, and POSTing to it is a 405 in JSON', async () => {
  const ok = await request('GET', '/__static_probe.json');
  assert.equal(ok.status, 200);
  assert.equal(JSON.parse(ok.text).status, 'ok');
  assertOAuth(await request('POST', '/__static_probe.json', { body: 'x=1' }), 405, 'invalid_request');
});

test('health and readiness go through to the wellknown worker', async () => {
  assert.equal((await request('GET', '/healthz')).status, 200);
  assert.equal((await request('GET', '/readyz')).status, 200);
});

test('nginx-made errors are never cached and carry no server version', async () => {
  const res = await request('GET', '/nope');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.server, 'nginx');
});
