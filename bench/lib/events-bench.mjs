// bench/events' measurements (see there): GET /api/v1/events latency over the seeded events,
// then webhook delivery throughput with BENCH_DELIVERY_PROCESSES delivery processes. Prints
// markdown tables. Environment from bench/events: BENCH_EVENTS, BENCH_DB_CNF, BENCH_DB_ADMIN,
// BENCH_DB_NAME, BENCH_BIN_DIR, PORTCULLIS_VAR_DIR, PORTCULLIS_TEST_ENV.
import { createServer } from 'node:http';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, openSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { http, managementToken, varDir, configFile, sleep } from '../../tests/integration/harness.mjs';

// The tests' npm packages (tests/package.json).
const { Webhook } = createRequire(new URL('../../tests/package.json', import.meta.url))('standardwebhooks');

const n = Number(process.env.BENCH_EVENTS);
const requests = Number(process.env.BENCH_REQUESTS ?? 200);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4);
const depth = Number(process.env.BENCH_DEPTH ?? 100);
const deliveries = Number(process.env.BENCH_DELIVERIES ?? 20000);
const processes = Number(process.env.BENCH_DELIVERY_PROCESSES ?? 2);
const endpointCount = Number(process.env.BENCH_ENDPOINTS ?? 10);

function sql(statement) {
  return execFileSync('mariadb', [`--defaults-file=${process.env.BENCH_DB_CNF}`, `-u${process.env.BENCH_DB_ADMIN}`,
    '-N', '-B', process.env.BENCH_DB_NAME, '-e', statement], { encoding: 'utf8' });
}

const token = await managementToken();
const auth = { authorization: `Bearer ${token}` };
let lastRequestId = '';
async function get(query) {
  const r = await http(`/api/v1/events?${query}`, { headers: auth });
  if (r.status !== 200) throw new Error(`GET /api/v1/events?${query}: ${r.status} ${r.text}`);
  lastRequestId = r.headers.get('x-request-id');
  return r.json;
}

// The api worker's own time (duration_us of its access-log line) of each request id, in ms.
function serverTimes(ids) {
  const want = new Set(ids);
  const out = [];
  for (const line of readFileSync(path.join(varDir, 'log', 'api.log'), 'utf8').split('\n')) {
    if (!line.includes('"request_id"') || !line.includes('"request"')) continue;
    try {
      const l = JSON.parse(line);
      if (l.msg === 'request' && want.has(l.request_id)) out.push(l.duration_us / 1000);
    } catch {
      // a line cut by rotation
    }
  }
  return out.sort((a, b) => a - b);
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
async function measure(name, queryFor) {
  const times = [];
  let next = 0;
  let rows = 0;
  let total = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < requests) {
      const i = next++;
      const started = process.hrtime.bigint();
      const body = await get(queryFor(i));
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      rows += body.events.length;
      total = body.total_size;
    }
  }));
  times.sort((a, b) => a - b);
  console.log(`| ${name} | ${requests} | ${(rows / requests).toFixed(0)} | ${total} | ${quantile(times, 0.5).toFixed(1)} | ${quantile(times, 0.99).toFixed(1)} |`);
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

// The page token `depth` pages of 100 into a listing.
async function deepToken(filter) {
  const query = filter ? `${filter}&page_size=100` : 'page_size=100';
  let page = await get(query);
  for (let i = 1; i < depth && page.next_page_token; i++) {
    page = await get(`${query}&page_token=${encodeURIComponent(page.next_page_token)}`);
  }
  return page.next_page_token;
}

const user = (i) => `usr_0${String((i * 7919) % 99991).padStart(25, "0")}`;
console.log(`\n${n} events; ${requests} requests per row from ${concurrency} clients, page_size 50 (deep: ${depth} pages of 100 in)\n`);
console.log('| request | requests | rows/page | total_size | p50 ms | p99 ms |');
console.log('|---|---:|---:|---:|---:|---:|');
const firstAll = await measure('first page, no filter', () => 'page_size=50');
await measure('first page, `user_id`', (i) => `page_size=50&user_id=${user(i)}`);
const firstType = await measure('first page, `types=token.issued`', () => 'page_size=50&types=token.issued');
await measure('first page, `user_id` + `types=token.validated`', (i) => `page_size=50&user_id=${user(i)}&types=token.validated`);
const deep = await deepToken('');
const deepAll = await measure(`page ${depth + 1} (of 100), no filter`, () => `page_size=50&page_token=${encodeURIComponent(deep)}`);
const deepType = await deepToken('types=token.issued');
const deepTyped = await measure(`page ${depth + 1} (of 100), \`types=token.issued\``, () => `page_size=50&types=token.issued&page_token=${encodeURIComponent(deepType)}`);
const ratio = (a, b) => `p50 ${(a.p50 / b.p50).toFixed(2)}×, p99 ${(a.p99 / b.p99).toFixed(2)}×`;
console.log(`\nDeep page against the first: no filter ${ratio(deepAll, firstAll)}; \`types=token.issued\` ${ratio(deepTyped, firstType)} (target: within 2×)`);

// The same pairs again, one request at a time and alternating first page / deep page (ABAB), so
// that the machine's drift during the run falls on both alike; client time and the api
// worker's own time (its access log's duration_us).
async function alternate(name, firstQuery, deepQuery, rounds = Number(process.env.BENCH_ALTERNATE ?? 200)) {
  const client = { first: [], deep: [] };
  const ids = { first: [], deep: [] };
  for (let i = 0; i < rounds; i++) {
    for (const [k, q] of [['first', firstQuery], ['deep', deepQuery]]) {
      const started = process.hrtime.bigint();
      await get(q);
      client[k].push(Number(process.hrtime.bigint() - started) / 1e6);
      ids[k].push(lastRequestId);
    }
  }
  await sleep(200);
  const row = (k) => {
    const c = client[k].sort((a, b) => a - b);
    const s = serverTimes(ids[k]);
    return { c50: quantile(c, 0.5), c99: quantile(c, 0.99), s50: quantile(s, 0.5), s99: quantile(s, 0.99), n: s.length };
  };
  const f = row('first');
  const d = row('deep');
  const cell = (v) => v.toFixed(2);
  console.log(`| ${name} | ${rounds} + ${rounds} | ${cell(f.s50)} / ${cell(d.s50)} (${(d.s50 / f.s50).toFixed(2)}×) | ${cell(f.s99)} / ${cell(d.s99)} (${(d.s99 / f.s99).toFixed(2)}×) | ${cell(f.c50)} / ${cell(d.c50)} (${(d.c50 / f.c50).toFixed(2)}×) | ${cell(f.c99)} / ${cell(d.c99)} (${(d.c99 / f.c99).toFixed(2)}×) |`);
}
console.log('\nFirst page / deep page, alternating, one request at a time (server = the api worker\'s duration_us):\n');
console.log('| listing | requests | server p50 ms | server p99 ms | client p50 ms | client p99 ms |');
console.log('|---|---:|---:|---:|---:|---:|');
await alternate('no filter', 'page_size=50', `page_size=50&page_token=${encodeURIComponent(deep)}`);
await alternate('`types=token.issued`', 'page_size=50&types=token.issued', `page_size=50&types=token.issued&page_token=${encodeURIComponent(deepType)}`);
if (deliveries <= 0) process.exit(0);  // BENCH_DELIVERIES=0: the listing only

// Delivery throughput.
let first = 0;
let last = 0;
const seen = new Set();
const secrets = new Map();
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    if (!first) first = now;
    last = now;
    if (seen.size < 5) new Webhook(secrets.get(req.url)).verify(Buffer.concat(chunks).toString('utf8'), req.headers);
    seen.add(req.headers['webhook-id']);
    res.statusCode = 200;
    res.end();
  });
});
let connections = 0;
receiver.on('connection', () => connections++);
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const hooks = [];
for (let i = 0; i < endpointCount; i++) {
  const created = await http('/api/v1/webhooks', { method: 'POST', headers: auth,
    json: { url: `http://127.0.0.1:${receiver.address().port}/bench-${i}`, event_types: ['api_client.created'] } });
  if (created.status !== 201) throw new Error(`POST /api/v1/webhooks: ${created.status} ${created.text}`);
  hooks.push(created.json.id);
  secrets.set(`/bench-${i}`, created.json.secret);
}
const eventCount = Math.ceil(deliveries / endpointCount);
// The stack's own delivery process pauses; BENCH_DELIVERY_PROCESSES others do the work.
const stackPid = Number(readFileSync(path.join(varDir, 'run', 'webhooks.pid'), 'utf8').trim());
process.kill(stackPid, 'SIGSTOP');
const children = [];
try {
  const base = Date.now() % 1000000000;
  sql(`START TRANSACTION;
    INSERT INTO events (id, type, occurred_at, data)
      SELECT CONCAT('evt_1', LPAD(${base} * 100000 + seq, 25, '0')), 'api_client.created',
             UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE + INTERVAL seq MICROSECOND, '{"created_by":"bench"}'
      FROM seq_1_to_${eventCount};
    INSERT INTO listing_counts (scope, shard, n) VALUES ('events:api_client.created', 15, ${eventCount})
      ON DUPLICATE KEY UPDATE n = n + VALUES(n);
    INSERT INTO webhook_deliveries (id, webhook_id, event_id, state, attempts, next_attempt_at, create_time, update_time)
      SELECT CONCAT('msg_', SUBSTRING(e.id, 5), '_', SUBSTRING(w.id, 4)), w.id, e.id, 'pending', 0,
             e.occurred_at, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)
      FROM events e JOIN webhooks w ON w.id IN (${hooks.map((h) => `'${h}'`).join(', ')})
      WHERE e.id BETWEEN CONCAT('evt_1', LPAD(${base} * 100000 + 1, 25, '0'))
                     AND CONCAT('evt_1', LPAD(${base} * 100000 + ${eventCount}, 25, '0'));
    COMMIT;`);
  const started = Date.now();
  const log = openSync(path.join(varDir, 'log', 'webhooks-bench.log'), 'a');
  for (let i = 0; i < processes; i++) {
    children.push(spawn(path.join(process.env.BENCH_BIN_DIR, 'portcullis-webhooks'), ['--config', configFile],
      { stdio: ['ignore', log, log] }));
  }
  const expected = eventCount * endpointCount;
  while (seen.size < expected && Date.now() - started < 600000) await sleep(200);
  const seconds = (last - first) / 1000;
  console.log(`\n| delivery processes | endpoints | deliveries | distinct webhook-ids | connections | seconds (first to last) | deliveries/s |`);
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  console.log(`| ${processes} | ${endpointCount} | ${expected} | ${seen.size} | ${connections} | ${seconds.toFixed(1)} | ${(seen.size / seconds).toFixed(0)} |`);
} finally {
  for (const c of children) c.kill('SIGTERM');
  process.kill(stackPid, 'SIGCONT');
  for (const hook of hooks) await http(`/api/v1/webhooks/${hook}`, { method: 'DELETE', headers: auth });
  receiver.close();
}
