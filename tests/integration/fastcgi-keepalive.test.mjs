// Kept-alive FastCGI between nginx and the workers (docs/operations.md, "Kept-alive FastCGI"):
// nginx reuses its connections to a pool, and the pool never starves. A worker serves one request
// at a time but polls every connection it holds, so an idle kept connection blocks nothing and
// nginx keeps many (upstream `keepalive 32`); nginx closes them first (keepalive_timeout) and a
// worker drops a connection left idle past PORTCULLIS_FASTCGI_KEEPALIVE_IDLE_MS. Tested: every
// request at 8, 32 and 128 concurrent client connections answers, a fresh request after the load
// answers, and a peer that holds many idle kept connections on every worker of a pool does not
// keep a request through nginx from being answered: no worker has to drop one of them first; a
// body the worker does not read does not end its kept connection.
// Bounds here are failure timeouts, never speed assertions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { env, baseUrl, sleep, workerSocket, masterPid, childPids, parseFastcgiResponse } from './harness.mjs';

const base = new URL(baseUrl);

// Prometheus samples of one /metrics scrape: { 'name{labels}': value }.
async function scrape() {
  const res = await fetch(env.PORTCULLIS_METRICS_URL);
  assert.equal(res.status, 200);
  const samples = {};
  for (const line of (await res.text()).split('\n')) {
    const m = line.match(/^([a-z_]+)(\{[^}]*\})? (\S+)$/);
    if (m) samples[m[1] + (m[2] ?? '')] = Number(m[3]);
  }
  return samples;
}
const requestsOf = (s, pool) =>
  Object.entries(s)
    .filter(([k]) => k.startsWith(`portcullis_http_requests_total{pool="${pool}",`))
    .reduce((sum, [, v]) => sum + v, 0);
const counterOf = (s, name, pool) => s[`${name}{pool="${pool}"}`] ?? 0;

// One request over `agent` (a client connection of its own when the agent allows it), with a
// bound after which the test fails instead of hanging.
function request(agent, { method = 'GET', path, body, headers = {} }, boundMs = 45000) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method, path, agent, headers: body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), ...headers } : headers },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(boundMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${boundMs} ms`)));
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

// The request mix: two pools (wellknown and oauth), GET and POST, every answer the worker's own.
const mix = [
  { req: { path: '/healthz' }, check: (r) => r.status === 200 && JSON.parse(r.text).status === 'ok' },
  {
    // A 404 of the wellknown worker: never from nginx's cache of the documents.
    req: { path: '/.well-known/openid-configuration' },
    check: (r) => r.status === 404 && JSON.parse(r.text).error === 'not_found',
  },
  {
    // No client authentication: the oauth worker refuses it in the OAuth error shape.
    req: { method: 'POST', path: '/oauth/token', body: 'grant_type=refresh_token&refresh_token=nope&client_id=pc_none' },
    check: (r) => r.status >= 400 && r.status < 500 && typeof JSON.parse(r.text).error === 'string',
  },
];

// `connections` client connections at once, each sending `perConnection` requests in turn.
async function load(connections, perConnection) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const failures = [];
  let answered = 0;
  try {
    await Promise.all(
      Array.from({ length: connections }, async (_, c) => {
        for (let i = 0; i < perConnection; i++) {
          const { req, check } = mix[(c + i) % mix.length];
          try {
            const r = await request(agent, req);
            let ok = false;
            try {
              ok = check(r);
            } catch {
              ok = false;
            }
            if (ok) answered++;
            else failures.push(`${req.method ?? 'GET'} ${req.path}: ${r.status} ${r.text.slice(0, 120)}`);
          } catch (e) {
            failures.push(String(e.message ?? e));
          }
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return { answered, failures };
}

// A fresh client connection, nothing reused: must answer within the bound.
async function freshRequest(boundMs = 15000) {
  const agent = new http.Agent({ keepAlive: false });
  try {
    return await request(agent, { path: '/healthz' }, boundMs);
  } finally {
    agent.destroy();
  }
}

test('nginx keeps its FastCGI connections alive: a pool accepts far fewer connections than it serves requests', async () => {
  const before = await scrape();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < 60; i++) {
      const r = await request(agent, { path: '/healthz' });
      assert.equal(r.status, 200);
    }
  } finally {
    agent.destroy();
  }
  const after = await scrape();
  const requests = requestsOf(after, 'wellknown') - requestsOf(before, 'wellknown');
  const connections =
    counterOf(after, 'portcullis_fastcgi_connections_total', 'wellknown') -
    counterOf(before, 'portcullis_fastcgi_connections_total', 'wellknown');
  assert.ok(requests >= 60, `wellknown served ${requests} requests`);
  // Counted at all (0 new ones is possible: nginx may reuse connections it already kept).
  assert.ok(counterOf(after, 'portcullis_fastcgi_connections_total', 'wellknown') >= 1, 'the wellknown pool counts its connections');
  assert.ok(connections * 4 <= requests, `${connections} connections for ${requests} requests: not kept alive`);
});

test('a request body the worker never reads costs no kept connection, and no request fails', async () => {
  // 257 query parameters: the worker refuses the request before it reads the body (issue 9's
  // limits), so a 32 kB body is left on the connection. The worker drains it (runtime
  // finish_request); libfcgi alone would take it for the next request's first record and close
  // the connection nginx has just put back among its idle ones, racing its next request.
  const query = Array.from({ length: 257 }, (_, i) => `p${i}=1`).join('&');
  const refused = { method: 'POST', path: `/oauth/token?${query}`, body: `grant_type=refresh_token&pad=${'x'.repeat(32 * 1024)}` };
  const unauthenticated = mix[2];
  const before = await scrape();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const rounds = 30;
  try {
    for (let i = 0; i < rounds; i++) {
      const r = await request(agent, refused);
      assert.equal(r.status, 400, r.text);
      assert.equal(JSON.parse(r.text).error, 'invalid_request');
      assert.match(JSON.parse(r.text).error_description, /more than 256 parameters/);
      const next = await request(agent, unauthenticated.req);
      assert.ok(unauthenticated.check(next), `${next.status} ${next.text.slice(0, 120)}`);
    }
  } finally {
    agent.destroy();
  }
  const after = await scrape();
  const connections =
    counterOf(after, 'portcullis_fastcgi_connections_total', 'oauth') -
    counterOf(before, 'portcullis_fastcgi_connections_total', 'oauth');
  assert.ok(connections * 4 <= 2 * rounds, `${connections} oauth connections for ${2 * rounds} requests: an unread body ended them`);
});

for (const connections of [8, 32, 128]) {
  test(`every request answers at ${connections} concurrent client connections, and a fresh one after the load`, async () => {
    const perConnection = connections >= 128 ? 4 : 12;
    const { answered, failures } = await load(connections, perConnection);
    assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of ${connections * perConnection} failed`);
    assert.equal(answered, connections * perConnection);
    // Right after the load: nginx still holds its kept connections.
    const now = await freshRequest();
    assert.equal(now.status, 200, now.text);
    // After nginx's keepalive_timeout (1 s): the kept connections were closed by nginx, not by
    // the workers' idle timeout; the pools answer on new connections.
    await sleep(1500);
    const later = await freshRequest();
    assert.equal(later.status, 200, later.text);
  });
}

// Talks FastCGI straight to a worker socket with FCGI_KEEP_CONN set: sends one request at a
// time and hands back each response; `closed` resolves when the worker closes the connection.
function keptConnection(socketPath) {
  const sock = net.connect(socketPath);
  let buf = Buffer.alloc(0);
  let waiter = null;
  let id = 0;
  const closed = new Promise((resolve) => {
    sock.on('close', resolve);
    sock.on('error', () => {});
  });
  const endOfResponse = () => {
    for (let i = 0; i + 8 <= buf.length; ) {
      const len = buf.readUInt16BE(i + 4);
      const next = i + 8 + len + buf.readUInt8(i + 6);
      if (next > buf.length) return -1;
      if (buf.readUInt8(i + 1) === 3) return next; // FCGI_END_REQUEST
      i = next;
    }
    return -1;
  };
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    const end = endOfResponse();
    if (end >= 0 && waiter) {
      const w = waiter;
      waiter = null;
      const one = buf.subarray(0, end);
      buf = buf.subarray(end);
      w(parseFastcgiResponse(one));
    }
  });
  const record = (type, rid, content) => {
    const pad = (8 - (content.length % 8)) % 8;
    const h = Buffer.from([1, type, rid >> 8, rid & 255, content.length >> 8, content.length & 255, pad, 0]);
    return Buffer.concat([h, content, Buffer.alloc(pad)]);
  };
  const pair = (k, v) => Buffer.concat([Buffer.from([k.length, v.length]), Buffer.from(k), Buffer.from(v)]);
  return {
    closed,
    send(params) {
      id = (id % 60000) + 1;
      const p = Buffer.concat(Object.entries(params).map(([k, v]) => pair(k, v)));
      return new Promise((resolve, reject) => {
        waiter = resolve;
        closed.then(() => reject(new Error('the worker closed the connection before answering')));
        sock.write(
          Buffer.concat([
            record(1, id, Buffer.from([0, 1, 1, 0, 0, 0, 0, 0])), // RESPONDER, FCGI_KEEP_CONN
            record(4, id, p),
            record(4, id, Buffer.alloc(0)),
            record(5, id, Buffer.alloc(0)),
          ]),
        );
      });
    },
    destroy: () => sock.destroy(),
  };
}

const within = (promise, ms, what) =>
  Promise.race([promise, sleep(ms).then(() => { throw new Error(`${what}: not within ${ms} ms`); })]);

test('a peer holding many idle kept connections on every worker of a pool starves nothing', async () => {
  const workers = childPids(masterPid('wellknown')).length;
  assert.ok(workers >= 1, 'the wellknown pool has workers');
  const before = await scrape();
  const healthz = { REQUEST_METHOD: 'GET', DOCUMENT_URI: '/healthz', REQUEST_URI: '/healthz', SERVER_NAME: 'localhost' };
  // Four times as many connections as workers, each answered once and then left idle: with
  // one-connection-at-a-time workers every worker would sit on one of them.
  const held = Array.from({ length: 4 * workers }, () => keptConnection(workerSocket('wellknown')));
  try {
    const first = await within(Promise.all(held.map((c) => c.send(healthz))), 20000, 'the first requests');
    for (const r of first) assert.equal(r.status, 200);
    // A request through nginx is answered while every held connection stays open: no worker
    // waited for one of them to go idle and be dropped (that takes 3 s; the checks below run
    // well within it).
    const fresh = await freshRequest(30000);
    assert.equal(fresh.status, 200, fresh.text);
    const middle = await scrape();
    assert.equal(
      counterOf(middle, 'portcullis_fastcgi_idle_closes_total', 'wellknown') -
        counterOf(before, 'portcullis_fastcgi_idle_closes_total', 'wellknown'),
      0,
      'a worker dropped an idle kept connection to serve the others',
    );
    // Every held connection is still kept: each answers a second request.
    const second = await within(Promise.all(held.map((c) => c.send(healthz))), 10000, 'second requests on the kept connections');
    for (const r of second) assert.equal(r.status, 200);
    // Left idle, they are closed by the workers after their idle timeout (3 s).
    await within(Promise.all(held.map((c) => c.closed)), 20000, 'the workers closing the idle connections');
  } finally {
    for (const c of held) c.destroy();
  }
  const after = await scrape();
  const closes =
    counterOf(after, 'portcullis_fastcgi_idle_closes_total', 'wellknown') -
    counterOf(before, 'portcullis_fastcgi_idle_closes_total', 'wellknown');
  assert.ok(closes >= held.length, `${closes} idle closes for ${held.length} held connections`);
  // And the pool serves normally again.
  const { failures } = await load(8, 6);
  assert.deepEqual(failures, []);
});
