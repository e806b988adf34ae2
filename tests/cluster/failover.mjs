// Load for scripts/cluster-failover (not part of the test suite: it needs scripts/run-cluster).
// For DURATION seconds, CONCURRENCY loops through the load balancer:
//  - refresh-token rotation on seeded chains (CHAINS), retrying a request that got no answer
//    or a 5xx with the SAME token, as a client would: a token answered 200 twice is a refresh
//    token accepted twice (must never happen); a retry refused as reused after a lost answer is
//    counted apart (the rotation had committed; the client lost the response);
//  - user creation through the management API: every 201 is read back at the end through the
//    load balancer (a write answered 2xx must never be lost).
// Prints one JSON object: totals, per-second timeline, the violations.
const base = process.env.PORTCULLIS_BASE_URL;
const duration = Number(process.env.DURATION ?? 45) * 1000;
const concurrency = Number(process.env.CONCURRENCY ?? 8);
const clientId = process.env.FAILOVER_CLIENT_ID;
const adminToken = process.env.FAILOVER_ADMIN_TOKEN;
const chains = (process.env.FAILOVER_CHAINS ?? '').split(',').filter(Boolean);
const suffix = process.env.FAILOVER_SUFFIX;

const started = Date.now();
const timeline = new Map(); // second → { ok, errors, refused }
const tick = (kind) => {
  const s = Math.floor((Date.now() - started) / 1000);
  const t = timeline.get(s) ?? { ok: 0, errors: 0, refused: 0 };
  t[kind] += 1;
  timeline.set(s, t);
};
const errorsAt = [];

async function post(path, { form, json, headers = {} }) {
  const h = { ...headers };
  let body;
  if (form) { body = new URLSearchParams(form).toString(); h['content-type'] = 'application/x-www-form-urlencoded'; }
  if (json) { body = JSON.stringify(json); h['content-type'] = 'application/json'; }
  try {
    const res = await fetch(base + path, { method: 'POST', headers: h, body, signal: AbortSignal.timeout(10000) });
    const text = await res.text();
    let parsed;
    try { parsed = JSON.parse(text); } catch { parsed = undefined; }
    return { status: res.status, json: parsed };
  } catch (e) {
    return { status: 0, json: undefined, error: String(e) };
  }
}

const accepted = new Map(); // token → times answered 200
const stats = { refresh_ok: 0, refresh_retries: 0, chains_ended_by_lost_answer: 0, chains_ended_other: 0,
  writes_ok: 0, writes_failed: 0, requests: 0, errors: 0, accepted_twice: 0 };
const created = [];

async function refreshChain(first) {
  let token = first;
  let retried = false;
  while (Date.now() - started < duration) {
    const r = await post('/oauth/token', { form: { grant_type: 'refresh_token', refresh_token: token, client_id: clientId } });
    stats.requests += 1;
    if (r.status === 200) {
      tick('ok');
      const n = (accepted.get(token) ?? 0) + 1;
      accepted.set(token, n);
      if (n > 1) stats.accepted_twice += 1;
      stats.refresh_ok += 1;
      token = r.json.refresh_token;
      retried = false;
    } else if (r.status === 0 || r.status >= 500) {
      tick('errors');
      stats.errors += 1;
      errorsAt.push(Date.now() - started);
      stats.refresh_retries += 1;
      retried = true; // same token again
      await new Promise((res) => setTimeout(res, 200));
    } else {
      tick('refused');
      if (retried && r.json?.error === 'invalid_grant') stats.chains_ended_by_lost_answer += 1;
      else stats.chains_ended_other += 1;
      return;
    }
  }
}

async function writes(worker) {
  let i = 0;
  while (Date.now() - started < duration) {
    const email = `fo-${suffix}-${worker}-${i++}@example.com`;
    const r = await post('/api/v1/users', { json: { email, email_verified: true }, headers: { authorization: `Bearer ${adminToken}` } });
    stats.requests += 1;
    if (r.status === 201) { tick('ok'); stats.writes_ok += 1; created.push(r.json.id); }
    else if (r.status === 0 || r.status >= 500) { tick('errors'); stats.errors += 1; errorsAt.push(Date.now() - started); stats.writes_failed += 1; await new Promise((res) => setTimeout(res, 200)); }
    else { tick('refused'); stats.writes_failed += 1; }
  }
}

const loops = [];
let next = 0;
for (let w = 0; w < concurrency; w++) {
  if (w % 2 === 0) {
    loops.push((async () => {
      while (next < chains.length && Date.now() - started < duration) await refreshChain(chains[next++]);
    })());
  } else {
    loops.push(writes(w));
  }
}
await Promise.all(loops);

// Every write answered 201 must be readable now, through any node.
let lost = 0;
for (const id of created) {
  let r;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      r = await fetch(`${base}/api/v1/users/${id}`, { headers: { authorization: `Bearer ${adminToken}` } });
      if (r.status !== 0 && r.status < 500) break;
    } catch { /* retried */ }
    await new Promise((res) => setTimeout(res, 500));
  }
  if (!r || r.status !== 200) lost += 1;
}
stats.lost_writes = lost;
stats.timeline = [...timeline.entries()].sort((a, b) => a[0] - b[0]).map(([s, t]) => ({ s, ...t }));
stats.error_offsets_ms = errorsAt;
console.log(JSON.stringify(stats));
