// Load for scripts/cluster-failover (not part of the test suite: it needs scripts/run-cluster).
// For DURATION seconds, CONCURRENCY loops through the load balancer, a quarter each:
//  - refresh-token rotation on seeded chains (CHAINS), retrying a request that got no answer
//    or a 5xx with the SAME token, as a client would: a token answered 200 twice is a refresh
//    token accepted twice (must never happen); a retry refused as reused after a lost answer is
//    counted apart (the rotation had committed; the client lost the response);
//  - authorization-code exchange of seeded codes (CODES, PKCE verifier = code + VERIFIER_TAIL),
//    retried the same way: a code answered 200 twice must never happen;
//  - user creation through the management API, and user provisioning through SCIM (a
//    directory's bearer token): every 201 is read back at the end through the load balancer
//    (a write answered 2xx must never be lost);
//  - a webhook subscribed to user.created and scim.user.created, delivered to a receiver here
//    that verifies each delivery with npm `standardwebhooks`: at the end, every user answered
//    201 must have had its creation event delivered (waiting up to WEBHOOK_WAIT seconds).
// Prints one JSON object: totals, per-second timeline, the violations.
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const base = process.env.PORTCULLIS_BASE_URL;
const duration = Number(process.env.DURATION ?? 45) * 1000;
const concurrency = Number(process.env.CONCURRENCY ?? 8);
const clientId = process.env.FAILOVER_CLIENT_ID;
const adminToken = process.env.FAILOVER_ADMIN_TOKEN;
const chains = (process.env.FAILOVER_CHAINS ?? '').split(',').filter(Boolean);
const suffix = process.env.FAILOVER_SUFFIX;
const codes = (process.env.FAILOVER_CODES ?? '').split(',').filter(Boolean);
const verifierTail = process.env.FAILOVER_VERIFIER_TAIL ?? '';
const redirectUri = process.env.FAILOVER_REDIRECT_URI;
const scimToken = process.env.FAILOVER_SCIM_TOKEN;
const webhookWait = Number(process.env.WEBHOOK_WAIT ?? 120) * 1000;
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

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
  code_ok: 0, code_retries: 0, codes_ended_by_lost_answer: 0, codes_refused_other: 0, codes_accepted_twice: 0,
  writes_ok: 0, writes_failed: 0, scim_ok: 0, scim_failed: 0, requests: 0, errors: 0, accepted_twice: 0 };
const created = [];
const provisioned = [];

// The webhook receiver: every delivery verified with the endpoint's secret; user ids by event.
let webhookSecret;
const delivered = new Set(); // user ids whose creation event arrived
const deliveryIds = new Map(); // webhook-id → times received
let badSignature = 0;
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const id = req.headers['webhook-id'];
    deliveryIds.set(id, (deliveryIds.get(id) ?? 0) + 1);
    try {
      const event = new Webhook(webhookSecret).verify(body, req.headers);
      if (event.data?.user_id) delivered.add(event.data.user_id);
    } catch {
      badSignature += 1;
    }
    res.statusCode = 200;
    res.end('thanks');
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
{
  const r = await post('/api/v1/webhooks', {
    json: { url: `http://127.0.0.1:${receiver.address().port}/failover`, event_types: ['user.created', 'scim.user.created'] },
    headers: { authorization: `Bearer ${adminToken}` },
  });
  if (r.status !== 201) throw new Error(`webhook not created: ${r.status}`);
  webhookSecret = r.json.secret;
}

// A request that got no answer or a 5xx: counted, then a pause before the loop retries.
async function failed() {
  tick('errors');
  stats.errors += 1;
  errorsAt.push(Date.now() - started);
  await sleep(200);
}

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
      stats.refresh_retries += 1;
      retried = true; // same token again
      await failed();
    } else {
      tick('refused');
      if (retried && r.json?.error === 'invalid_grant') stats.chains_ended_by_lost_answer += 1;
      else stats.chains_ended_other += 1;
      return;
    }
  }
}

const codeAccepted = new Map(); // code → times answered 200

// One code until it is answered: a retry after no answer or a 5xx sends the same code again.
async function exchangeCode(code) {
  let retried = false;
  while (Date.now() - started < duration) {
    const r = await post('/oauth/token', { form: { grant_type: 'authorization_code', code, code_verifier: code + verifierTail, redirect_uri: redirectUri, client_id: clientId } });
    stats.requests += 1;
    if (r.status === 200) {
      tick('ok');
      const n = (codeAccepted.get(code) ?? 0) + 1;
      codeAccepted.set(code, n);
      if (n > 1) stats.codes_accepted_twice += 1;
      stats.code_ok += 1;
      return;
    }
    if (r.status === 0 || r.status >= 500) {
      stats.code_retries += 1;
      retried = true;
      await failed();
      continue;
    }
    tick('refused');
    if (retried && r.json?.error === 'invalid_grant') stats.codes_ended_by_lost_answer += 1;
    else stats.codes_refused_other += 1;
    return;
  }
}

async function writes(worker) {
  let i = 0;
  while (Date.now() - started < duration) {
    const email = `fo-${suffix}-${worker}-${i++}@example.com`;
    const r = await post('/api/v1/users', { json: { email, email_verified: true }, headers: { authorization: `Bearer ${adminToken}` } });
    stats.requests += 1;
    if (r.status === 201) { tick('ok'); stats.writes_ok += 1; created.push(r.json.id); }
    else if (r.status === 0 || r.status >= 500) { stats.writes_failed += 1; await failed(); }
    else { tick('refused'); stats.writes_failed += 1; }
  }
}

// SCIM provisioning: a new userName each time (a retry of an unanswered create may find the
// user already there; that answers 409 and is counted as refused, not lost).
async function provisions(worker) {
  let i = 0;
  while (Date.now() - started < duration) {
    const email = `fo-scim-${suffix}-${worker}-${i++}@example.com`;
    const r = await post('/scim/v2/Users', {
      json: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: email, active: true,
        name: { givenName: 'Fail', familyName: 'Over' }, emails: [{ value: email, primary: true, type: 'work' }] },
      headers: { authorization: `Bearer ${scimToken}` },
    });
    stats.requests += 1;
    if (r.status === 201) { tick('ok'); stats.scim_ok += 1; provisioned.push(r.json.id); }
    else if (r.status === 0 || r.status >= 500) { stats.scim_failed += 1; await failed(); }
    else { tick('refused'); stats.scim_failed += 1; }
  }
}

const loops = [];
let nextChain = 0;
let nextCode = 0;
for (let w = 0; w < concurrency; w++) {
  switch (w % 4) {
    case 0:
      loops.push((async () => {
        while (nextChain < chains.length && Date.now() - started < duration) await refreshChain(chains[nextChain++]);
      })());
      break;
    case 1:
      loops.push((async () => {
        while (nextCode < codes.length && Date.now() - started < duration) await exchangeCode(codes[nextCode++]);
      })());
      break;
    case 2:
      loops.push(writes(w));
      break;
    default:
      loops.push(provisions(w));
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
// Every user provisioned with a 201 must be readable through SCIM.
let lostScim = 0;
for (const id of provisioned) {
  let r;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      r = await fetch(`${base}/scim/v2/Users/${id}`, { headers: { authorization: `Bearer ${scimToken}` } });
      if (r.status < 500) break;
    } catch { /* retried */ }
    await sleep(500);
  }
  if (!r || r.status !== 200) lostScim += 1;
}
stats.lost_scim = lostScim;

// Every creation answered 201 must reach the webhook receiver. SCIM resources carry the
// Portcullis user id as their id, as the events do.
const expected = [...created, ...provisioned];
const waitStarted = Date.now();
while (expected.some((id) => !delivered.has(id)) && Date.now() - waitStarted < webhookWait) await sleep(500);
stats.webhook_expected = expected.length;
stats.webhook_delivered = expected.filter((id) => delivered.has(id)).length;
stats.webhook_missing = expected.length - stats.webhook_delivered;
stats.webhook_wait_s = Math.round((Date.now() - waitStarted) / 1000);
stats.webhook_deliveries = [...deliveryIds.values()].reduce((a, b) => a + b, 0);
stats.webhook_duplicates = [...deliveryIds.values()].filter((n) => n > 1).length;
stats.webhook_bad_signature = badSignature;
receiver.close();
stats.timeline = [...timeline.entries()].sort((a, b) => a[0] - b[0]).map(([s, t]) => ({ s, ...t }));
stats.error_offsets_ms = errorsAt;
console.log(JSON.stringify(stats));
