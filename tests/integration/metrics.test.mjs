// /metrics (docs/operations.md, Metrics): Prometheus text on nginx's loopback-only metrics
// listener, counting every worker of every pool through their shared blocks; never reachable
// through the public server. And the request id: a load balancer's X-Request-Id reaches the
// response and the worker's log lines, a malformed one is replaced by nginx's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { http, env, basic, varDir, sleep, rawExchange, fastcgiRequestBytes, parseFastcgiResponse, workerSocket } from './harness.mjs';

const metricsUrl = env.PORTCULLIS_METRICS_URL;

// { 'name{labels}': value } of one scrape, after checking the exposition's shape.
async function scrape() {
  const res = await fetch(metricsUrl);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const samples = {};
  const typed = new Set();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const t = line.match(/^# TYPE (\S+) (counter|gauge|histogram)$/);
    if (t) { typed.add(t[1]); continue; }
    if (line.startsWith('# HELP ')) continue;
    const m = line.match(/^([a-z_]+)(\{[^}]*\})? (\S+)$/);
    assert.ok(m, `not a sample line: ${line}`);
    const family = m[1].replace(/_(bucket|sum|count)$/, '');
    assert.ok(typed.has(m[1]) || typed.has(family), `sample before its # TYPE: ${line}`);
    samples[m[1] + (m[2] ?? '')] = Number(m[3]);
  }
  return samples;
}

const value = (s, key) => s[key] ?? 0;

test('every pool reports, and counters add up across all the workers of a pool', async () => {
  const before = await scrape();
  for (const pool of ['wellknown', 'oauth', 'api', 'scim', 'demo-mcp']) {
    // The master forks the workers after attaching the block: its count is in the same block.
    assert.ok(value(before, `portcullis_worker_starts_total{pool="${pool}"}`) >= 1, `${pool} reports`);
    assert.ok(`portcullis_db_conflicts_total{pool="${pool}"}` in before, `${pool} has database counters`);
  }
  // 40 requests at once spread over the pool's workers; one worker's own counts would be a share.
  const n = 40;
  const answers = await Promise.all(Array.from({ length: n }, () => http('/healthz')));
  assert.ok(answers.every((r) => r.status === 200));
  // One refused and one issued token (the oauth pool), counted by what they are.
  const refused = await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials' },
    headers: { authorization: basic(env.PORTCULLIS_CLIENT_ID, 'wrong-secret') } });
  assert.equal(refused.status, 401);
  const issued = await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials' },
    headers: { authorization: basic(env.PORTCULLIS_CLIENT_ID, env.PORTCULLIS_CLIENT_SECRET) } });
  assert.equal(issued.status, 200);
  const after = await scrape();

  const ok = (pool) => `portcullis_http_requests_total{pool="${pool}",code="2xx"}`;
  assert.ok(value(after, ok('wellknown')) - value(before, ok('wellknown')) >= n,
    `wellknown 2xx grew by ${value(after, ok('wellknown')) - value(before, ok('wellknown'))}, want >= ${n}`);
  const grew = (key) => value(after, key) - value(before, key);
  assert.ok(grew('portcullis_tokens_refused_total{pool="oauth"}') >= 1);
  assert.ok(grew('portcullis_tokens_issued_total{pool="oauth",grant_type="client_credentials"}') >= 1);
  assert.ok(grew('portcullis_http_requests_total{pool="oauth",code="4xx"}') >= 1);

  // The histogram is whole: buckets never fall, +Inf equals _count equals the requests counted.
  for (const pool of ['wellknown', 'oauth']) {
    let last = 0;
    for (const le of ['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '+Inf']) {
      const key = `portcullis_http_request_duration_seconds_bucket{pool="${pool}",le="${le}"}`;
      assert.ok(key in after, `missing ${key}`);
      assert.ok(after[key] >= last, `${key} fell`);
      last = after[key];
    }
    assert.equal(after[`portcullis_http_request_duration_seconds_count{pool="${pool}"}`], last);
    assert.ok(after[`portcullis_http_request_duration_seconds_sum{pool="${pool}"}`] > 0);
  }
});

test('/metrics is not served through the public server, whatever the request says', async () => {
  const plain = await http('/metrics');
  assert.equal(plain.status, 404);
  assert.doesNotMatch(plain.text, /portcullis_http_requests_total/);
  // A header of that name arrives as HTTP_PORTCULLIS_METRICS_LISTENER, never as the parameter.
  const forged = await http('/metrics', { headers: { 'portcullis-metrics-listener': '1' } });
  assert.equal(forged.status, 404);
  // Straight to the worker's socket without the parameter: 404 too.
  const raw = parseFastcgiResponse(await rawExchange(workerSocket('wellknown'), fastcgiRequestBytes({
    REQUEST_METHOD: 'GET', REQUEST_URI: '/metrics', DOCUMENT_URI: '/metrics', QUERY_STRING: '',
    REMOTE_ADDR: '127.0.0.1', SERVER_PROTOCOL: 'HTTP/1.1' })));
  assert.equal(raw.status, 404);
});

test("a load balancer's request id follows the request into the worker's log lines", async () => {
  const id = `lb-${randomBytes(8).toString('hex')}`;
  const r = await http('/api/v1/resources', { headers: { 'x-request-id': id } });
  assert.equal(r.status, 401);
  assert.equal(r.headers.get('x-request-id'), id);
  const bad = await http('/healthz', { headers: { 'x-request-id': 'has spaces; and "quotes"' } });
  assert.match(bad.headers.get('x-request-id'), /^[0-9a-f]{32}$/);
  await sleep(1500);  // nginx flushes its access log every second
  const api = readFileSync(path.join(varDir, 'log', 'api.log'), 'utf8').split('\n').filter((l) => l.includes(id));
  assert.ok(api.length >= 1, 'the worker logged the request id');
  for (const l of api) assert.equal(JSON.parse(l).request_id, id);
  const access = readFileSync(path.join(varDir, 'log', 'nginx-access.log'), 'utf8');
  assert.ok(access.includes(`"request_id":"${id}"`));
});
