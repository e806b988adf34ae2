// Bad input never gets a 5xx, an HTML page or a crash: every error reaches the client in its
// path family's shape (contract §0), whether nginx or a worker produced it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  http, baseUrl, managementToken, rawExchange, workerSocket, fastcgiRequestBytes,
  parseFastcgiResponse, masterPid, childPids,
  assertOAuthError, assertScimError, assertProblem,
} from './harness.mjs';

const big = 'x'.repeat(2 * 1024 * 1024);

test('bodies over 1 MiB get 413 in each family', async () => {
  const token = await managementToken();
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', body: big, headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 413);
  assertScimError(assert, await http('/scim/v2/Users', { method: 'POST', body: big, headers: { 'content-type': 'application/scim+json' } }), 413);
  assertProblem(assert, await http('/api/v1/clients', { method: 'POST', body: big, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } }), 413);
});

test('unknown paths and methods answer 404/405 in the family shape', async () => {
  assertOAuthError(assert, await http('/no/such/thing'), 404);
  assertOAuthError(assert, await http('/oauth/nothing'), 404);
  assertScimError(assert, await http('/scim/v2/Nothing'), 404);
  assertProblem(assert, await http('/api/v1/nothing'), 404, 'not_found');
  const r = await http('/oauth/token');
  assertOAuthError(assert, r, 405);
  assert.match(r.headers.get('allow'), /POST/);
  const k = await http('/keys', { method: 'DELETE' });
  assertOAuthError(assert, k, 405);
});

test('a malformed HTTP request gets a JSON 400 from nginx, never HTML', async () => {
  const url = new URL(baseUrl);
  for (const raw of ['GARBAGE\r\n\r\n', 'GET /keys HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n']) {
    const reply = (await rawExchange({ host: url.hostname, port: Number(url.port) }, raw)).toString('utf8');
    assert.match(reply, /^HTTP\/1\.1 (400|505)/, raw);
    assert.doesNotMatch(reply, /<html/i, raw);
    assert.match(reply, /application\/json/, raw);
  }
});

test('workers survive malformed FastCGI and oversized bodies sent straight to their socket', async () => {
  for (const family of ['wellknown', 'oauth', 'api', 'scim']) {
    const sock = workerSocket(family);
    const pidBefore = masterPid(family);
    const workersBefore = childPids(pidBefore).length;
    // garbage, a truncated record header, a record claiming more bytes than are sent
    await rawExchange(sock, Buffer.from('GET / HTTP/1.1\r\n\r\n'), 1000);
    await rawExchange(sock, Buffer.from([1, 1, 0]), 1000);
    await rawExchange(sock, Buffer.from([1, 4, 0, 1, 0xff, 0xff, 0, 0, 1, 2, 3]), 1000);
    // a params record with a name length larger than the record
    await rawExchange(sock, Buffer.concat([Buffer.from([1, 1, 0, 1, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]), Buffer.from([1, 4, 0, 1, 0, 4, 0, 0, 0x7f, 0x7f, 0x41, 0x41])]), 1000);
    // a body over 1 MiB: the worker itself answers 413 in the family shape
    const reply = parseFastcgiResponse(await rawExchange(sock, fastcgiRequestBytes({
      REQUEST_METHOD: 'POST', DOCUMENT_URI: `/${family === 'api' ? 'api/v1' : family === 'scim' ? 'scim/v2' : 'oauth'}/x`,
      CONTENT_LENGTH: String(2 * 1024 * 1024), CONTENT_TYPE: 'application/json', REMOTE_ADDR: '127.0.0.1',
    }, Buffer.alloc(2 * 1024 * 1024, 0x61))));
    assert.equal(reply.status, 413, `${family}: ${reply.body}`);
    const body = JSON.parse(reply.body);
    if (family === 'scim') assert.equal(body.status, '413');
    else if (family === 'api') assert.equal(body.status, 413);
    else assert.equal(typeof body.error, 'string');
    // a CONTENT_LENGTH that is not a number
    const bad = parseFastcgiResponse(await rawExchange(sock, fastcgiRequestBytes({ REQUEST_METHOD: 'POST', DOCUMENT_URI: '/oauth/token', CONTENT_LENGTH: 'lots' })));
    assert.equal(bad.status, 400, bad.body);
    // ... and the pool is intact and serving
    assert.equal(masterPid(family), pidBefore);
    assert.equal(childPids(pidBefore).length, workersBefore);
    const ok = parseFastcgiResponse(await rawExchange(sock, fastcgiRequestBytes({ REQUEST_METHOD: 'GET', DOCUMENT_URI: '/healthz' })));
    assert.ok(ok.status === 200 || ok.status === 404, `${family}: ${ok.status}`);
  }
  assert.equal((await http('/healthz')).status, 200);
});
