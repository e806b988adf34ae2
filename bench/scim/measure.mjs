// SCIM at a million users (issue 11, bench/README.md "SCIM"): over HTTP against the stack that
// bench/scim/seed filled, one request at a time (keep-alive), client-side wall time:
//   1. filters Okta and Entra look users up with: userName eq, emails.value eq, externalId eq
//      (random seeded users; p50/p99 of BENCH_SCIM_SAMPLES each, default 1000);
//   2. the first page (startIndex=1&count=100), p50 of 20;
//   3. Okta's import: every page of the directory in order, startIndex=1, 101, 201, … to the end
//      (BENCH_SCIM_PAGES limits the walk), checking that the pages are disjoint and complete;
//   4. a cold jump to startIndex=900000 (or 90 % of N) after a write (so no mark of an earlier
//      walk can help), BENCH_SCIM_JUMPS times (default 5);
//   5. a PATCH adding 1,000 members to the group of 100,000, BENCH_SCIM_PATCHES times (default 5),
//      each with users not yet in the group.
//
//   node bench/scim/measure.mjs [VAR_DIR]      (default var; reads VAR_DIR/bench/scim.env)
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const varDir = process.argv[2] ?? process.env.PORTCULLIS_VAR_DIR ?? 'var';
const envText = readFileSync(`${varDir}/bench/scim.env`, 'utf8');
const cfg = Object.fromEntries(envText.trim().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2)));
const base = `${cfg.BENCH_SCIM_BASE}/scim/v2`;
const n = Number(cfg.BENCH_SCIM_USERS);
const members = Number(cfg.BENCH_SCIM_GROUP_MEMBERS);
const suffix = cfg.BENCH_SCIM_SUFFIX;
const samples = Number(process.env.BENCH_SCIM_SAMPLES ?? 1000);
const maxPages = Number(process.env.BENCH_SCIM_PAGES ?? Infinity);
const jumps = Number(process.env.BENCH_SCIM_JUMPS ?? 5);
const patches = Number(process.env.BENCH_SCIM_PATCHES ?? 5);
const headers = { authorization: `Bearer ${cfg.BENCH_SCIM_TOKEN}`, 'content-type': 'application/scim+json' };

async function call(method, path, body) {
  const t0 = performance.now();
  const r = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  const ms = performance.now() - t0;
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${text.slice(0, 300)}`);
  return { ms, json: text ? JSON.parse(text) : undefined };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const f2 = (x) => x.toFixed(2);
const rows = [];
const report = (what, xs, extra = '') => {
  const line = `| ${what} | ${xs.length} | ${f2(pct(xs, 50))} | ${f2(pct(xs, 99))} | ${f2(Math.max(...xs))} | ${extra} |`;
  rows.push(line);
  console.log(line);
};
const pick = (i) => Math.floor(Math.random() * i);
const idx = (i) => String(i).padStart(7, '0');

console.log(`SCIM bench: ${n} users, group of ${members}; ${new Date().toISOString()}; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
console.log('| measurement | requests | p50 ms | p99 ms | max ms | notes |');
console.log('|---|---:|---:|---:|---:|---|');

// 1. The lookups.
const lookups = {
  'filter userName eq': (i) => `userName eq "user.${idx(i)}@bench-${suffix}.EXAMPLE.com"`,
  'filter emails.value eq': (i) => `emails.value eq "U${idx(i)}@mail-${suffix}.example.com"`,
  'filter externalId eq': (i) => `externalId eq "00u${suffix}${idx(i)}"`,
};
for (const [what, make] of Object.entries(lookups)) {
  const times = [];
  for (let k = 0; k < samples; k++) {
    const r = await call('GET', `/Users?filter=${encodeURIComponent(make(pick(n)))}`);
    if (r.json.totalResults !== 1) throw new Error(`${what}: ${r.json.totalResults} results`);
    times.push(r.ms);
  }
  report(what, times, 'exactly 1 result each');
}

// 2. The first page.
const firstTimes = [];
for (let k = 0; k < 20; k++) firstTimes.push((await call('GET', '/Users?startIndex=1&count=100')).ms);
report('first page (startIndex=1&count=100)', firstTimes);
const firstP50 = pct(firstTimes, 50);

// 3. Okta's import.
const pageTimes = [];
const seen = new Set();  // in list order

let total = 0;
const walkStart = performance.now();
for (let start = 1, page = 0; page < maxPages; start += 100, page++) {
  const r = await call('GET', `/Users?startIndex=${start}&count=100`);
  total = r.json.totalResults;
  for (const u of r.json.Resources) {
    if (seen.has(u.id)) throw new Error(`page at ${start} repeats ${u.id}`);
    seen.add(u.id);
  }
  pageTimes.push(r.ms);
  if (start + 100 > total) break;
}
const walkSeconds = (performance.now() - walkStart) / 1000;
const complete = seen.size === total ? 'every user once' : `${seen.size} of ${total} users`;
report('sequential pages, count=100', pageTimes,
  `${complete}; worst page ${f2(Math.max(...pageTimes) / firstP50)}× the first page's p50, p99 ${f2(pct(pageTimes, 99) / firstP50)}×; walk ${walkSeconds.toFixed(0)} s`);
const deciles = [];
for (let d = 0; d < 10; d++) {
  const part = pageTimes.slice(Math.floor((d * pageTimes.length) / 10), Math.floor(((d + 1) * pageTimes.length) / 10));
  if (part.length) deciles.push(f2(pct(part, 50)));
}
console.log(`p50 per tenth of the walk (ms): ${deciles.join(', ')}`);

// 4. Cold jumps: a write first, so that no mark of the walk is valid.
const deep = Math.max(1, Math.min(900000, Math.floor(n * 0.9)));
const jumpTimes = [];
for (let k = 0; k < jumps; k++) {
  const victim = (await call('GET', `/Users?filter=${encodeURIComponent(`externalId eq "00u${suffix}${idx(n - 1 - k)}"`)}`)).json.Resources[0];
  await call('PATCH', `/Users/${victim.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'title', value: `jump ${Date.now()}` }] });
  const r = await call('GET', `/Users?startIndex=${deep}&count=100`);
  if (r.json.Resources.length !== 100) throw new Error(`jump: ${r.json.Resources.length} resources`);
  // The same 100 users the walk saw at those positions (a PATCH of a title moves no one).
  if (seen.size === total) {
    const expected = [...seen].slice(deep - 1, deep + 99).join();
    if (r.json.Resources.map((u) => u.id).join() !== expected) throw new Error(`jump to ${deep}: not the walk's users`);
  }
  jumpTimes.push(r.ms);
}
report(`cold jump to startIndex=${deep}`, jumpTimes, `after a write each time${seen.size === total ? '; the walk\'s users at those positions' : ''}`);

// 5. PATCH adding 1,000 members to the group.
const patchTimes = [];
for (let k = 0; k < patches; k++) {
  const from = members + k * 1000;
  if (from + 1000 > n) break;
  // The ids of users members..members+999 (by index order = creation order): one page each.
  const page = await call('GET', `/Users?startIndex=${from + 1}&count=100&attributes=id`);
  const ids = page.json.Resources.map((u) => u.id);
  for (let s = from + 101; s <= from + 1000; s += 100) {
    ids.push(...(await call('GET', `/Users?startIndex=${s}&count=100&attributes=id`)).json.Resources.map((u) => u.id));
  }
  const r = await call('PATCH', `/Groups/${cfg.BENCH_SCIM_GROUP_ID}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'add', path: 'members', value: ids.map((value) => ({ value })) }],
  });
  patchTimes.push(r.ms);
}
const after = await call('GET', `/Groups?filter=${encodeURIComponent(`id eq "${cfg.BENCH_SCIM_GROUP_ID}"`)}&excludedAttributes=members`);
report('PATCH add 1,000 members to the large group', patchTimes, `group answered 204; ${after.json.totalResults} group found after`);
console.log(`load afterwards ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
