// Documents served as documents (issue 16): the discovery documents and the JWKS are rendered
// once per change in each wellknown worker and served from its memory, with an ETag and a
// Cache-Control; If-None-Match with the current ETag gets 304 and no body. nginx answers them
// from its cache for up to 2 s (nginx/portcullis/document-cache.conf), so a worker sees at most
// about one request a second per document. A change (a resource edited or deleted, a signing key
// rotated) shows within the documented bound: the worker's re-read (1 s; the key ring's refresh,
// 1 s in scripts/test) plus nginx's 2 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import nodeHttp from 'node:http';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import { http, cli, sleep, baseUrl, managementToken, varDir } from './harness.mjs';
import { api, unique } from './management.mjs';

const get = (p, headers = {}) => http(p, { headers });
const resourcePaths = (id) => [
  `/.well-known/oauth-authorization-server/resources/${id}`,
  `/resources/${id}/.well-known/oauth-authorization-server`,
];
const openidPaths = (id) => [
  `/.well-known/openid-configuration/resources/${id}`,
  `/resources/${id}/.well-known/openid-configuration`,
];

async function createResource() {
  const r = await api('POST', '/api/v1/resources', {
    json: { name: `docs ${unique()}`, server_url: `https://docs-${unique()}.example/mcp`, scopes: [{ name: 'docs:read' }] },
  });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

// The documented bound of a change: the worker's re-read (1 s) plus nginx's cache (2 s).
const boundMs = 3000;

// Polls `path` until `done(response)` holds, for the bound and a second more.
async function eventually(path, headers, done) {
  let r;
  const until = Date.now() + boundMs + 1000;
  do {
    r = await get(path, headers);
    if (done(r)) return r;
    await sleep(100);
  } while (Date.now() < until);
  assert.fail(`${path} did not change in ${boundMs + 1000} ms: ${r.status} ${r.text}`);
}

// How many requests for `path` reached a wellknown worker: its access lines (one write each,
// before the answer leaves the worker).
function workerRequests(pathname) {
  return readFileSync(path.join(varDir, 'log', 'wellknown.log'), 'utf8').split('\n')
    .filter((l) => l.includes('"msg":"request"') && l.includes(pathname))
    .filter((l) => JSON.parse(l).path === pathname).length;
}

// A GET with headers fetch() will not send (Host).
function rawGet(pathname, headers) {
  const url = new URL(baseUrl + pathname);
  return new Promise((resolve, reject) => {
    const req = nodeHttp.get({ host: url.hostname, port: url.port, path: url.pathname, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
  });
}

// The contract of one document: 200 with an ETag and Cache-Control, the same ETag again, 304
// without a body for that ETag (also weak, also in a list, also "*"), 200 for another.
async function assertConditional(path, cacheControl) {
  const first = await get(path);
  assert.equal(first.status, 200, `${path}: ${first.text}`);
  const etag = first.headers.get('etag');
  assert.match(etag ?? '', /^"[A-Za-z0-9_-]{16,}"$/, `${path} has a strong ETag`);
  assert.equal(first.headers.get('cache-control'), cacheControl, path);
  const again = await get(path);
  assert.equal(again.headers.get('etag'), etag, `${path}: every worker gives the same ETag`);
  assert.equal(again.text, first.text);
  for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const r = await get(path, { 'if-none-match': inm });
    assert.equal(r.status, 304, `${path} with If-None-Match: ${inm}`);
    assert.equal(r.text, '', '304 has no body');
    assert.equal(r.headers.get('etag'), etag);
    assert.equal(r.headers.get('cache-control'), cacheControl);
  }
  const other = await get(path, { 'if-none-match': '"not-the-etag"' });
  assert.equal(other.status, 200);
  assert.equal(other.text, first.text);
  return { etag, body: first.json };
}

test('metadata and JWKS carry an ETag and Cache-Control; If-None-Match gets 304', async () => {
  const resource = await createResource();
  const [a, b] = resourcePaths(resource.id);
  const oauth = await assertConditional(a, 'public, no-cache');
  assert.equal((await assertConditional(b, 'public, no-cache')).etag, oauth.etag, 'the two URLs serve the same bytes');
  assert.equal(oauth.body.issuer, `${baseUrl}/resources/${resource.id}`);
  const [c, d] = openidPaths(resource.id);
  const openid = await assertConditional(c, 'public, no-cache');
  assert.equal((await assertConditional(d, 'public, no-cache')).etag, openid.etag);
  assert.notEqual(openid.etag, oauth.etag, 'a different document, a different ETag');
  // The CORS header stays on a 304 (browser-based MCP clients revalidate too).
  const cors = await get(a, { 'if-none-match': oauth.etag, origin: 'https://app.example' });
  assert.equal(cors.status, 304);
  assert.equal(cors.headers.get('access-control-allow-origin'), '*');

  const env = await assertConditional('/.well-known/oauth-authorization-server', 'public, max-age=300');
  assert.equal(env.body.issuer, baseUrl);
  const keys = await assertConditional('/keys', (await get('/keys')).headers.get('cache-control'));
  assert.match((await get('/keys')).headers.get('cache-control'), /^public, max-age=\d+$/);
  assert.ok(keys.body.keys.length >= 1);
  // HEAD answers the same headers.
  const head = await http(a, { method: 'HEAD', headers: { 'if-none-match': oauth.etag } });
  assert.equal(head.status, 304);
});

test('a changed resource shows in its documents within the bound, with a new ETag', async () => {
  const resource = await createResource();
  const [path] = resourcePaths(resource.id);
  const [openidPath] = openidPaths(resource.id);
  const before = await get(path);
  const beforeOpenid = await get(openidPath);
  assert.equal(before.json.registration_endpoint, `${baseUrl}/resources/${resource.id}/client_register`);
  const etag = before.headers.get('etag');

  const patched = await api('PATCH', `/api/v1/resources/${resource.id}`, {
    json: { dcr_enabled: false, scopes: [{ name: 'docs:read' }, { name: 'docs:write' }] },
  });
  assert.equal(patched.status, 200, patched.text);
  // Revalidating with the old ETag: a 200 with the new document once the worker has re-read it.
  const after = await eventually(path, { 'if-none-match': etag }, (r) => r.status === 200);
  assert.equal(after.json.registration_endpoint, undefined);
  assert.deepEqual(after.json.scopes_supported, ['docs:read', 'docs:write']);
  assert.notEqual(after.headers.get('etag'), etag);
  const openid = await eventually(openidPath, { 'if-none-match': beforeOpenid.headers.get('etag') }, (r) => r.status === 200);
  assert.deepEqual(openid.json.scopes_supported, ['docs:read', 'docs:write']);
  // Every worker has it by now, and nginx's copy can only be refilled from one of them: the new
  // ETag is current everywhere.
  await sleep(1100);
  for (let i = 0; i < 8; i++) {
    const r = await get(path, { 'if-none-match': after.headers.get('etag') });
    assert.equal(r.status, 304);
  }

  // Deleted: a 404 in the OAuth shape within the same bound, never the old document.
  assert.equal((await api('DELETE', `/api/v1/resources/${resource.id}`)).status, 204);
  const gone = await eventually(path, {}, (r) => r.status === 404);
  assert.equal(gone.json.error, 'not_found');
  await sleep(1100);
  for (let i = 0; i < 8; i++) assert.equal((await get(path)).status, 404);
});

test('after a key rotation the JWKS has a new ETag and publishes the next key', async () => {
  const first = await get('/keys');
  const etag = first.headers.get('etag');
  const signer = decodeProtectedHeader(await managementToken()).kid;
  const out = cli('keys', 'rotate');
  const newKid = out.match(/(key_[0-9a-z]{26})/)[1];
  // Every worker re-reads its key ring once per PORTCULLIS_KEYRING_REFRESH_SECONDS (1 s here).
  const changed = await eventually('/keys', { 'if-none-match': etag }, (r) => r.status === 200);
  const kids = changed.json.keys.map((k) => k.kid);
  assert.ok(kids.includes(newKid), 'the next key is published');
  assert.ok(kids.includes(signer), 'the current key stays published');
  assert.notEqual(changed.headers.get('etag'), etag);
  await sleep(1100);
  for (let i = 0; i < 8; i++) {
    const r = await get('/keys', { 'if-none-match': etag });
    assert.equal(r.status, 200, 'no worker answers the old set as current');
    assert.ok(r.json.keys.some((k) => k.kid === newKid));
  }
});

test('nginx answers a document from its cache: the worker sees about one request a second', async () => {
  const resource = await createResource();
  const [path] = resourcePaths(resource.id);
  const first = await get(path);
  assert.equal(first.status, 200);
  const etag = first.headers.get('etag');
  const before = workerRequests(path);
  const started = Date.now();
  for (let i = 0; i < 30; i++) {
    // Each answer carries its own request's id, never that of the request that filled the copy.
    const id = `docs-${randomBytes(8).toString('hex')}`;
    const conditional = i % 2 === 1;
    const r = await get(path, conditional ? { 'if-none-match': etag, 'x-request-id': id } : { 'x-request-id': id });
    assert.equal(r.status, conditional ? 304 : 200, `request ${i}`);
    assert.equal(r.headers.get('etag'), etag);
    assert.equal(r.headers.get('cache-control'), 'public, no-cache');
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
    assert.equal(r.headers.get('x-request-id'), id);
    if (!conditional) assert.equal(r.text, first.text);
  }
  const seconds = (Date.now() - started) / 1000;
  // An entry lives more than a second, so over `seconds` the worker is asked at most once per
  // second and once more. Without the cache it would have seen all 30.
  const reached = workerRequests(path) - before;
  assert.ok(reached <= Math.floor(seconds) + 2, `${reached} of 30 requests in ${seconds} s reached the worker`);
});

test('a 404 is never cached: every request for an unknown resource reaches the worker', async () => {
  const path = `/.well-known/oauth-authorization-server/resources/res_${randomBytes(13).toString('hex')}`;
  const before = workerRequests(path);
  for (let i = 0; i < 5; i++) {
    const r = await get(path);
    assert.equal(r.status, 404);
    assert.equal(r.json.error, 'not_found');
    assert.equal(r.headers.get('cache-control'), 'no-store');
  }
  assert.equal(workerRequests(path) - before, 5);
});

test("a client's Host, X-Forwarded-* and Origin never change the document anyone is served", async () => {
  const resource = await createResource();
  const [path] = resourcePaths(resource.id);
  const issuer = `${baseUrl}/resources/${resource.id}`;
  // The first request fills nginx's copy with forged headers; the document is built from the
  // configured base URL only, so what it stored is what everyone gets.
  const forged = await rawGet(path, {
    host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http',
    origin: 'https://evil.example', accept: 'text/html',
  });
  assert.equal(forged.status, 200, forged.text);
  assert.equal(JSON.parse(forged.text).issuer, issuer);
  assert.equal(forged.headers['access-control-allow-origin'], '*');
  const plain = await get(path);
  assert.equal(plain.text, forged.text);
  assert.equal(plain.headers.get('etag'), forged.headers.etag);
  // Another resource's document is its own, whatever it shares with this one.
  const other = await createResource();
  const [otherPath] = resourcePaths(other.id);
  assert.equal((await rawGet(otherPath, { host: 'evil.example' })).status, 200);
  assert.equal((await get(otherPath)).json.issuer, `${baseUrl}/resources/${other.id}`);
  assert.equal((await get(path)).json.issuer, issuer);
});
