// bench/compare's driver: Portcullis and the peer (server.mjs) measured side by side with wrk
// (or autocannon, COMPARE_DRIVER=autocannon), the two sides alternating round by round so that the
// machine's noise falls on both. Prints the table of bench/README.md ("Side by side with
// oidc-provider").
//
// Environment (bench/compare sets all of it): PORTCULLIS_TEST_ENV (the stack's local.env),
// PORTCULLIS_VAR_DIR, COMPARE_PEER_URL, COMPARE_PORTCULLIS_PIDS / COMPARE_PEER_PIDS / COMPARE_DB_PID (root pids whose
// process trees are each side's server: CPU is read from /proc), COMPARE_CONNECTIONS (64),
// COMPARE_DURATION (seconds a round, 10), COMPARE_ROUNDS (2), COMPARE_AT80 (1: also a paced run
// at 80 % of each side's peak for its p99, always with wrk), COMPARE_DRIVER (wrk | autocannon), COMPARE_SIGN_RATE (openssl speed rsa2048, one core),
// COMPARE_FIGURES (comma list of refresh,code,jwks,metadata; also authorize and refused, below), COMPARE_ALG (the access_token_signing_alg of
// Portcullis' bench resource: RS256, ES256 or EdDSA).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { baseUrl, http, managementToken } from '../../tests/integration/harness.mjs';
import { Browser, completeAuthorization } from '../../tests/integration/browser.mjs';

const env = process.env;
const connections = Number(env.COMPARE_CONNECTIONS ?? 64);
const duration = Number(env.COMPARE_DURATION ?? 10);
const rounds = Number(env.COMPARE_ROUNDS ?? 2);
const at80 = env.COMPARE_AT80 === '1';
const signRate = Number(env.COMPARE_SIGN_RATE ?? 0);
const driver = env.COMPARE_DRIVER ?? 'wrk';
const figures = (env.COMPARE_FIGURES ?? 'refresh,code,jwks,metadata').split(',');
const redirect = 'http://127.0.0.1:3000/callback';
const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');

// ---- CPU of process trees, from /proc ----
const ticksPerSecond = 100;
function processTable() {
  const table = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.push({ pid: Number(d), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch { /* gone */ }
  }
  return table;
}
// The processes of these roots and of all their descendants.
function processTree(roots, table = processTable()) {
  const tree = new Set(roots);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of table) if (!tree.has(p.pid) && tree.has(p.ppid)) { tree.add(p.pid); grew = true; }
  }
  return tree;
}
function cpuSeconds(roots) {
  const table = processTable();
  const tree = processTree(roots, table);
  return table.filter((p) => tree.has(p.pid)).reduce((s, p) => s + p.ticks, 0) / ticksPerSecond;
}
// Client round trips to MariaDB (every statement, prepared executions included) and statement
// preparations, from the server's status counters (the status queries themselves excluded).
function dbCounters() {
  if (!env.COMPARE_DB_CNF) return { questions: 0, prepares: 0 };
  const out = execFileSync('mariadb', [`--defaults-file=${env.COMPARE_DB_CNF}`, '--batch', '--skip-column-names', '-e',
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Com_stmt_prepare')"], { encoding: 'utf8' });
  const v = Object.fromEntries(out.trim().split('\n').map((l) => l.split('\t')));
  return { questions: Number(v.Questions), prepares: Number(v.Com_stmt_prepare) };
}
const pids = (v) => (v ?? '').split(/[ ,]+/).filter(Boolean).map(Number);
const dbPids = pids(env.COMPARE_DB_PID);

// ---- the two sides ----
// Portcullis: a resource and a public DCR client of it, through the management API and DCR.
const suffix = randomBytes(4).toString('hex');
const admin = { authorization: `Bearer ${await managementToken()}` };
const resourceUrl = `https://bench-compare-${suffix}.test/mcp`;
const created = await http('/api/v1/resources', {
  method: 'POST', headers: admin,
  json: {
    name: 'bench compare', server_url: resourceUrl, scopes: [{ name: 'bench:read', description: 'Bench' }],
    access_token_signing_alg: env.COMPARE_ALG ?? 'RS256',
  },
});
if (created.status !== 201) throw new Error(`resource: ${created.status} ${created.text}`);
const registered = await http(`/resources/${created.json.id}/client_register`, {
  method: 'POST',
  json: { client_name: 'bench compare', redirect_uris: [redirect], token_endpoint_auth_method: 'none', client_uri: `https://bench-compare-${suffix}.test` },
});
if (registered.status !== 201) throw new Error(`client: ${registered.status} ${registered.text}`);
const peerUrl = env.COMPARE_PEER_URL;
const sides = {
  portcullis: {
    base: baseUrl,
    pids: pids(env.COMPARE_PORTCULLIS_PIDS),
    clientId: registered.json.client_id,
    authorize: '/oauth/authorize',
    token: '/oauth/token',
    jwks: '/keys',
    metadata: `/.well-known/oauth-authorization-server/resources/${created.json.id}`,
    resource: resourceUrl,
    scope: 'bench:read',
  },
  peer: {
    base: peerUrl,
    pids: pids(env.COMPARE_PEER_PIDS),
    clientId: 'bench',
    authorize: '/auth',
    token: '/token',
    jwks: '/jwks',
    metadata: '/.well-known/openid-configuration',
    resource: 'https://bench.peer.test/mcp',
    scope: 'bench:read',
  },
};

function authorizeUrl(side) {
  const q = new URLSearchParams({
    response_type: 'code', client_id: side.clientId, redirect_uri: redirect, scope: side.scope,
    code_challenge: challenge, code_challenge_method: 'S256', state: 'benchstate', resource: side.resource,
  });
  return `${side.base}${side.authorize}?${q}`;
}
const codeOf = (location) => new URL(location, redirect).searchParams.get('code');
const exchangeBody = (side, code) => new URLSearchParams({
  grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirect,
  client_id: side.clientId, resource: side.resource,
}).toString();
const refreshBody = (side, rt) => new URLSearchParams({ grant_type: 'refresh_token', refresh_token: rt, client_id: side.clientId }).toString();
const form = { 'content-type': 'application/x-www-form-urlencoded' };

// Signs in once per side (the cookie every measured authorize request carries) and consents.
async function signIn(name) {
  const side = sides[name];
  const browser = new Browser();
  let page;
  if (name === 'portcullis') {
    page = await completeAuthorization(browser, authorizeUrl(side), `bench-${randomBytes(4).toString('hex')}@example.com`);
  } else {
    page = await browser.request(authorizeUrl(side));
    for (let i = 0; i < 10 && page.location && page.location.startsWith(side.base); i++) page = await browser.request(page.location);
  }
  if (!page.location?.startsWith(redirect) || !codeOf(page.location)) throw new Error(`${name}: the sign-in ended at ${page.status} ${page.location ?? page.html.slice(0, 500)}`);
  side.cookie = browser.cookieHeader();
  // The signed-in authorize must now answer with a code straight away.
  const again = await browser.request(authorizeUrl(side));
  if (!again.location?.startsWith(redirect)) throw new Error(`${name}: a signed-in authorize answered ${again.status} ${again.location ?? again.html.slice(0, 300)}`);
}

async function exchange(side, code) {
  const r = await fetch(`${side.base}${side.token}`, { method: 'POST', headers: form, body: exchangeBody(side, code) });
  const body = await r.json();
  if (r.status !== 200 || !body.refresh_token) throw new Error(`exchange: ${r.status} ${JSON.stringify(body)}`);
  return body;
}

// Refresh chains for the refresh figure: real code flows, 16 at a time. A run that stops loses
// the chains of its requests in flight (rotated by the server, the answer never read), so there
// are enough for every run of the figure.
async function chains(name, n) {
  const side = sides[name];
  const out = [];
  const flow = async () => {
    const r = await fetch(authorizeUrl(side), { headers: { cookie: side.cookie }, redirect: 'manual' });
    return (await exchange(side, codeOf(r.headers.get('location')))).refresh_token;
  };
  const lane = async () => {
    while (out.length < n) {
      // A kept-alive connection idle since the last run may be closed by the server as fetch
      // reuses it (Node's 5 s keep-alive timeout on the peer's side): that flow is tried again.
      let token;
      for (let attempt = 1; !token; attempt++) {
        try { token = await flow(); } catch (e) { if (attempt === 3 || e?.cause?.code !== 'UND_ERR_SOCKET') throw e; }
      }
      out.push(token);
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  return out;
}

// The `refused` figure's token: a real refresh token of the side with one character in its middle
// changed, so it has a real token's length and shape and fails only where the server checks it
// (Portcullis: the seal's tag, before any signature or statement; it is never a stored token's
// shape, which would be looked up). The plumbing every refresh pays, measured without the rest.
const unopenable = {};
async function unopenableToken(name) {
  if (!unopenable[name]) {
    const [token] = await chains(name, 1);
    const i = Math.floor(token.length / 2);
    unopenable[name] = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
  }
  return unopenable[name];
}

// ---- one wrk run ----
// wrk is the default driver: written in C, it spends a fraction of autocannon's CPU a request, and
// on two cores the load generator's CPU is taken from both servers (autocannon's own ceiling was
// about 19,000 GETs/s here, wrk's above 25,000). The script (bench/peer/wrk/figure.lua) follows
// refresh chains and code flows as the autocannon requests below do.
const wrkScript = fileURLToPath(new URL('wrk/figure.lua', import.meta.url));
const wrkThreads = 2;
const chainsFile = `${env.PORTCULLIS_VAR_DIR ?? '/tmp'}/compare-chains.txt`;
const inMs = (v, unit) => Number(v) * ({ us: 0.001, ms: 1, s: 1000, m: 60000 }[unit] ?? 1);
async function wrkOnce(name, figure, { seconds = duration, thinkMs = 0 } = {}) {
  const side = sides[name];
  const vars = { WRK_FIGURE: figure, WRK_THREADS: String(wrkThreads), WRK_DELAY_MS: String(thinkMs) };
  if (figure === 'refresh') {
    // Fresh chains for every run: wrk cannot hand the unused ones back (a table read from a
    // thread's state crashes wrk 4.1), and a run's chains must outnumber its connections.
    writeFileSync(chainsFile, (await chains(name, connections * 3)).join('\n') + '\n');
    Object.assign(vars, { WRK_PATH: side.token, WRK_CHAINS: chainsFile, WRK_REFRESH_BODY: new URLSearchParams({ grant_type: 'refresh_token', client_id: side.clientId }).toString() });
  } else if (figure === 'refused') {
    Object.assign(vars, { WRK_PATH: side.token, WRK_REFRESH_BODY: new URLSearchParams({ grant_type: 'refresh_token', client_id: side.clientId, refresh_token: await unopenableToken(name) }).toString() });
  } else if (figure === 'code' || figure === 'authorize') {
    const exchangePrefix = new URLSearchParams({ grant_type: 'authorization_code', code_verifier: verifier, redirect_uri: redirect, client_id: side.clientId, resource: side.resource }).toString();
    Object.assign(vars, { WRK_PATH: side.token, WRK_AUTHORIZE: authorizeUrl(side).slice(side.base.length), WRK_COOKIE: side.cookie, WRK_EXCHANGE_BODY: exchangePrefix });
  } else {
    vars.WRK_PATH = side[figure];
  }
  const target = `${side.base}${figure === 'jwks' || figure === 'metadata' ? side[figure] : figure === 'authorize' ? side.authorize : side.token}`;
  const cpu0 = cpuSeconds(side.pids);
  const db0 = cpuSeconds(dbPids);
  const q0 = dbCounters();
  const out = spawnSync('wrk', ['-t', String(wrkThreads), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '10s', '--latency', '-s', wrkScript, target],
    { env: { ...env, ...vars }, encoding: 'utf8' });
  const cpu = cpuSeconds(side.pids) - cpu0;
  const db = cpuSeconds(dbPids) - db0;
  const q1 = dbCounters();
  if (out.status !== 0) throw new Error(`wrk ${name} ${figure}: exit ${out.status} ${out.stderr}`);
  const result = /WRK_RESULT (\d+) (\d+) (\d+)/.exec(out.stdout);
  const p99 = /^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(out.stdout); // wrk pads seconds: "1.15s "
  const took = /requests in ([\d.]+)(us|ms|s|m)/.exec(out.stdout);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out.stdout);
  if (!result || !p99 || !took) throw new Error(`wrk ${name} ${figure}: unreadable output\n${out.stdout}`);
  const [ok, bad, starved] = result.slice(1, 4).map(Number);
  const elapsed = inMs(took[1], took[2]) / 1000;
  return {
    rate: ok / elapsed, p99: inMs(p99[1], p99[2]), ok,
    errors: bad + starved + (socketErrors ? socketErrors.slice(1).map(Number).reduce((a, b) => a + b, 0) : 0), cpu, db,
    questions: q1.questions - q0.questions - 1, prepares: q1.prepares - q0.prepares,
  };
}

// The p99 at 80 % of the peak: every connection waits a think time before each request, chosen
// so that the 64 connections together offer 80 % of the peak. A 2-second calibration run first
// measures how long a request cycle takes at that load (think time + answer), and the think time
// is shortened by the answer's share. This is a paced closed loop: a connection whose answer is
// slow sends its next request later (wrk has no open-loop mode), so the p99 is that of the
// answers, not of a queue in front of the server. autocannon's rate option is not used: it lets
// each connection send its share of a second back to back at the start of the second, which is
// full load for most of every second.
async function pacedRun(name, figure, flowsPerSecond) {
  const requestsPerSecond = flowsPerSecond * (figure === 'code' ? 2 : 1);
  const cycleMs = (1000 * connections) / requestsPerSecond;
  const probe = await wrkOnce(name, figure, { seconds: 2, thinkMs: cycleMs });
  const probeRequests = probe.rate * (figure === 'code' ? 2 : 1);
  const answerMs = Math.max(0, (1000 * connections) / probeRequests - cycleMs);
  const r = await wrkOnce(name, figure, { thinkMs: Math.max(0, Math.round(cycleMs - answerMs)) });
  return { ...r, target: flowsPerSecond };
}

// ---- one autocannon run ----
function run(name, figure, options = {}) {
  return driver === 'wrk' ? wrkOnce(name, figure, options) : autocannonRun(name, figure, options);
}
function autocannonRun(name, figure, { rate, seconds = duration } = {}) {
  if (figure === 'refused' || figure === 'authorize') throw new Error(`the ${figure} figure is measured with wrk only`);
  const side = sides[name];
  const url = side.base;
  const counts = { ok: 0, bad: 0 };
  let requests;
  if (figure === 'refresh') {
    const pool = side.pool;
    requests = [{
      method: 'POST', path: side.token, headers: form,
      setupRequest: (req) => {
        if (!pool.length) throw new Error(`${name}: no refresh chain left`);
        return { ...req, body: refreshBody(side, pool.shift()) };
      },
      onResponse: (status, body) => {
        if (status === 200) { counts.ok++; pool.push(JSON.parse(body).refresh_token); } else counts.bad++;
      },
    }];
  } else if (figure === 'code') {
    requests = [
      {
        method: 'GET', path: authorizeUrl(side).slice(url.length), headers: { cookie: side.cookie },
        onResponse: (status, _body, context, headers) => {
          const location = headers.location ?? headers.Location;
          const code = status >= 300 && status < 400 && location ? codeOf(location) : null;
          if (code) context.code = code; else counts.bad++;
        },
      },
      {
        method: 'POST', path: side.token, headers: form,
        setupRequest: (req, context) => (context.code ? { ...req, body: exchangeBody(side, context.code) } : null),
        onResponse: (status) => { if (status === 200) counts.ok++; else counts.bad++; },
      },
    ];
  } else {
    requests = [{ method: 'GET', path: side[figure], onResponse: (status) => { if (status === 200) counts.ok++; else counts.bad++; } }];
  }
  const cpu0 = cpuSeconds(side.pids);
  const db0 = cpuSeconds(dbPids);
  const q0 = dbCounters();
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration: seconds, requests, ...(rate ? { overallRate: rate } : {}) }, (err, result) => {
      if (err) return reject(err);
      const cpu = cpuSeconds(side.pids) - cpu0;
      const db = cpuSeconds(dbPids) - db0;
      const q1 = dbCounters();
      const seconds = result.duration;
      resolve({
        rate: counts.ok / seconds, p99: result.latency.p99, ok: counts.ok,
        errors: counts.bad + result.errors + result.timeouts, cpu, db,
        questions: q1.questions - q0.questions - 1, prepares: q1.prepares - q0.prepares,
      });
    });
  });
}

const ms = (x) => (x === undefined ? '' : Number(x.toFixed(1)));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

// ---- profiles (bench/compare --profile): Portcullis only, `perf record` during one run ----
if (env.COMPARE_PROFILE_DIR) {
  await signIn('portcullis');
  const { spawn } = await import('node:child_process');
  const side = sides.portcullis;
  for (const figure of figures) {
    if (figure === 'refresh') side.pool = await chains('portcullis', connections * 3);
    await run('portcullis', figure, { seconds: 1 });
    const tree = processTree([...side.pids, ...dbPids]);
    const perf = spawn('perf', ['record', '-q', '-g', '-F', '499', '-o', `${env.COMPARE_PROFILE_DIR}/${figure}.data`,
      '-p', [...tree].join(','), '--', 'sleep', String(duration)], { stdio: 'inherit' });
    const done = new Promise((resolve) => perf.on('exit', resolve));
    const r = await run('portcullis', figure);
    await done;
    console.error(`[compare] profiled ${figure}: ${r.rate.toFixed(0)}/s, p99 ${r.p99} ms, errors ${r.errors} (load ${load()})`);
    console.log(`${figure}\t${r.rate.toFixed(0)}\t${r.ok}\t${r.questions}\t${load()}`);
  }
  process.exit(0);
}

// ---- Portcullis alone (bench/compare --alone): no peer, each run's figures on one line ----
// For before/after pairs of one change (A-B-B-A with two build dirs) and for experiments on the
// stack's database between runs: COMPARE_ROUNDS runs of COMPARE_DURATION s per figure, and with
// COMPARE_PACED_RATE (requests a second) a paced run at that rate after them.
//
// Where a request's time went, from the stack's logs: nginx's access log line (request_time: from
// the request's first byte to the answer's last) and the worker's request line (duration_us: from
// the worker reading the request to its answer), joined by request id, for the token endpoint's
// requests the workers logged between `from` and `to`. What is not in the worker is the wait for a
// worker (nginx's queue, the pool's accept queue, a kept connection whose worker is busy with
// another one) and the transfers.
function latencySplit(from, to) {
  const logs = `${env.PORTCULLIS_VAR_DIR}/log`;
  const lines = (file) => { try { return readFileSync(`${logs}/${file}`, 'utf8').split('\n'); } catch { return []; } };
  const worker = new Map();
  for (const l of lines('oauth.log')) {
    if (!l.includes('"/oauth/token"') || !l.includes('"duration_us"')) continue;
    try {
      const j = JSON.parse(l);
      const ts = new Date(j.ts);
      if (ts >= from && ts <= to) worker.set(j.request_id, j.duration_us / 1000);
    } catch { /* a partial line */ }
  }
  const rows = [];
  for (const l of lines('nginx-access.log')) {
    if (!l.includes('"/oauth/token"')) continue;
    try {
      const j = JSON.parse(l);
      if (worker.has(j.request_id)) rows.push({ total: j.request_time * 1000, inWorker: worker.get(j.request_id) });
    } catch { /* a partial line */ }
  }
  if (rows.length < 100) return `latency split: ${rows.length} requests joined (too few)`;
  const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * p))]; };
  const total = rows.map((r) => r.total);
  const outside = rows.map((r) => Math.max(0, r.total - r.inWorker));
  const slow = rows.filter((r) => r.total >= pct(total, 0.99));
  const share = slow.reduce((a, r) => a + Math.min(r.inWorker, r.total), 0) / slow.reduce((a, r) => a + r.total, 0);
  return `latency split of ${rows.length} requests: nginx p50 ${pct(total, 0.5).toFixed(1)} p99 ${pct(total, 0.99).toFixed(1)} ms; ` +
    `in the worker p50 ${pct(rows.map((r) => r.inWorker), 0.5).toFixed(1)} p99 ${pct(rows.map((r) => r.inWorker), 0.99).toFixed(1)} ms; ` +
    `waiting for a worker p50 ${pct(outside, 0.5).toFixed(1)} p99 ${pct(outside, 0.99).toFixed(1)} ms; the slowest 1 %: ${(100 * share).toFixed(0)} % of their time in the worker`;
}
if (env.COMPARE_ALONE === '1') {
  await signIn('portcullis');
  const line = (figure, what, r) => {
    const per = (x) => (r.ok ? (x * 1000) / r.ok : 0).toFixed(3);
    console.log(`${figure}\t${what}\t${r.rate.toFixed(0)}/s\tp99 ${ms(r.p99)} ms\tCPU ${per(r.cpu)} ms server + ${per(r.db)} ms MariaDB` +
      `\t${(r.questions / Math.max(1, r.ok)).toFixed(2)} statements\terrors ${r.errors}\tload ${load()}`);
  };
  for (const figure of figures) {
    await run('portcullis', figure, { seconds: 1 });
    for (let round = 0; round < rounds; round++) line(figure, `round ${round + 1}`, await run('portcullis', figure));
    if (env.COMPARE_PACED_RATE) {
      const from = new Date();
      const r = await pacedRun('portcullis', figure, Number(env.COMPARE_PACED_RATE));
      line(figure, `paced at ${r.target}/s`, r);
      await new Promise((resolve) => setTimeout(resolve, 1500)); // nginx writes its access log each second
      console.log(`${figure}\tpaced\t${latencySplit(from, new Date())}`);
    }
  }
  process.exit(0);
}

// ---- the comparison ----
const loadBefore = load();
await signIn('portcullis');
await signIn('peer');
const results = {};
for (const figure of figures) {
  for (const name of Object.keys(sides)) {
    results[`${figure}/${name}`] = [];
    if (figure === 'refresh' && driver !== 'wrk') sides[name].pool = await chains(name, connections * (rounds + 4));
  }
  // A short unmeasured run per side first: JIT, connection pools and caches warm on both.
  for (const name of Object.keys(sides)) await run(name, figure, { seconds: 1 });
  for (let round = 0; round < rounds; round++) {
    // Alternate which side goes first, so neither always runs on the warmer machine.
    const order = round % 2 ? ['peer', 'portcullis'] : ['portcullis', 'peer'];
    for (const name of order) {
      const r = await run(name, figure);
      results[`${figure}/${name}`].push(r);
      console.error(`[compare] ${figure} ${name} round ${round + 1}: ${r.rate.toFixed(0)}/s p99 ${ms(r.p99)} ms errors ${r.errors} (load ${load()})`);
    }
  }
  if (at80) {
    for (const name of Object.keys(sides)) {
      const peak = median(results[`${figure}/${name}`].map((r) => r.rate));
      const r = await pacedRun(name, figure, Math.max(1, 0.8 * peak));
      results[`${figure}/${name}`].p99at80 = r.p99;
      results[`${figure}/${name}`].errorsAt80 = r.errors;
      console.error(`[compare] ${figure} ${name} at 80 % (${r.target.toFixed(0)}/s wanted): ${r.rate.toFixed(0)}/s p99 ${ms(r.p99)} ms errors ${r.errors} (load ${load()})`);
    }
  }
}

const label = { refresh: 'refresh grants/s', refused: 'refused refreshes/s (a token that does not open)', code: 'code flows/s, signed in (authorize + exchange)', authorize: 'signed-in authorize GETs/s (no exchange)', jwks: 'JWKS GET/s', metadata: 'metadata GET/s' };
const f0 = (x) => Math.round(x).toLocaleString('en-US');
const cell = (name, figure) => {
  const rs = results[`${figure}/${name}`];
  return { rate: median(rs.map((r) => r.rate)), p99: median(rs.map((r) => r.p99)), errors: rs.reduce((s, r) => s + r.errors, 0) + (rs.errorsAt80 ?? 0), p99at80: rs.p99at80, rs };
};
const lines = [];
const notes = [];
lines.push(`${new Date().toISOString().slice(0, 16)}Z, ${connections} connections, ${rounds} alternating rounds of ${duration} s (median), load average before: ${loadBefore}, after: ${load()}`);
lines.push('');
lines.push('| figure | Portcullis | oidc-provider (MariaDB) | ratio | p99 ms Portcullis | p99 ms peer |' + (at80 ? ' p99 ms at 80 % Portcullis | peer |' : '') + ' errors |');
lines.push('|---|---:|---:|---:|---:|---:|' + (at80 ? '---:|---:|' : '') + '---:|');
for (const figure of figures) {
  const a = cell('portcullis', figure);
  const b = cell('peer', figure);
  lines.push(`| ${label[figure]} | ${f0(a.rate)} | ${f0(b.rate)} | ${(a.rate / b.rate).toFixed(2)} | ${ms(a.p99)} | ${ms(b.p99)} |` + (at80 ? ` ${ms(a.p99at80)} | ${ms(b.p99at80)} |` : '') + ` ${a.errors + b.errors} |`);
  if (figure === 'refresh') {
    // Server CPU: the side's processes (Portcullis: workers and nginx; peer: the Node cluster) and MariaDB.
    const perCpu = (c) => median(c.rs.map((r) => r.ok / (r.cpu + r.db)));
    const pa = perCpu(a);
    const pb = perCpu(b);
    lines.push(`| refresh per server CPU-second | ${f0(pa)} | ${f0(pb)} | ${(pa / pb).toFixed(2)} | | |` + (at80 ? ' | |' : '') + ' |');
    if (signRate) {
      lines.push(`| server CPU per refresh, × one RS256 sign | ${(signRate / pa).toFixed(2)} | ${(signRate / pb).toFixed(2)} | | | |` + (at80 ? ' | |' : '') + ' |');
    }
    const split = (c) => {
      const n = c.rs.reduce((s, r) => s + r.ok, 0);
      return `${(c.rs.reduce((s, r) => s + r.cpu, 0) * 1000 / n).toFixed(3)} ms server + ${(c.rs.reduce((s, r) => s + r.db, 0) * 1000 / n).toFixed(3)} ms MariaDB`;
    };
    notes.push(`CPU per refresh — Portcullis: ${split(a)}; oidc-provider: ${split(b)}.`);
  }
}
for (const figure of figures.filter((f) => f === 'refresh' || f === 'code')) {
  const per = (name) => {
    const rs = results[`${figure}/${name}`];
    const n = rs.reduce((s, r) => s + r.ok, 0);
    return `${(rs.reduce((s, r) => s + r.questions, 0) / n).toFixed(2)} statements (${(rs.reduce((s, r) => s + r.prepares, 0) / n).toFixed(2)} preparations)`;
  };
  notes.push(`MariaDB round trips per ${figure === 'refresh' ? 'refresh' : 'code flow'} — Portcullis: ${per('portcullis')}; oidc-provider: ${per('peer')}.`);
}
lines.push('', ...notes.flatMap((n) => [n, '']));
if (signRate) lines.push('', `\`openssl speed rsa2048\` in the same run: ${signRate} signs/s on one core (${(1000 / signRate).toFixed(3)} ms a signature).`);
lines.push('', `Portcullis' access tokens: ${env.COMPARE_ALG ?? 'RS256'} (the peer's: RS256).`);
console.log(lines.join('\n'));
const failed = figures.some((f) => cell('portcullis', f).errors + cell('peer', f).errors > 0);
process.exit(failed ? 1 : 0);
