// Webhooks (contract §7, §11; docs/events.md) against the real stack and its delivery process
// (portcullis-webhooks, started by scripts/run-local; scripts/test sets a retry schedule of
// 1, 2, 2 s, a 5 s lease and disabling after 12 s of failures): endpoints through the API, every
// delivery verified by the npm `standardwebhooks` library, sign-in and token events delivered
// like management ones, a retry on schedule after a 500, secret rotation with both secrets
// signing, replay, connections reused, an endpoint disabled with a webhook.disabled event, and a
// burst that survives killing the delivery process mid-batch and restarting MariaDB, counted by
// webhook-id (a smaller burst than the 10,000 events, which would take minutes here).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, openSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { sleep, assertProblem, assertNoNulls, runLocal, varDir, binDir, configFile, http, baseUrl, masterPid, childPids, dbHoldLocks } from './harness.mjs';
import { Browser, completeAuthorization } from './browser.mjs';
import { api, admin, tokenWithScopes, createUser, unique } from './management.mjs';

// The receiver: verifies every request with the secrets of its endpoint (any one may match),
// answers `failStatus` to the first `failures` attempts of each webhook-id and 200 after, and
// keeps every delivery.
const endpoints = new Map(); // path → { secrets: [], failures, failStatus, seen: Map, got: [] }
let receiver;
let receiverUrl;

function receive(req, res) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const ep = endpoints.get(req.url);
    if (!ep) {
      res.statusCode = 404;
      return res.end();
    }
    let verified = null;
    for (const secret of ep.secrets) {
      try {
        verified = new Webhook(secret).verify(body, req.headers);
        break;
      } catch {
        // try the next secret
      }
    }
    const id = req.headers['webhook-id'];
    const n = ep.seen.get(id) ?? 0;
    ep.seen.set(id, n + 1);
    const status = n < ep.failures ? ep.failStatus : 200;
    ep.got.push({ at: Date.now(), id: req.headers['webhook-id'], signature: req.headers['webhook-signature'], timestamp: req.headers['webhook-timestamp'], verified, body, status, contentType: req.headers['content-type'] });
    res.statusCode = status;
    res.end(status === 200 ? 'thanks' : 'try later');
  });
}

function endpoint(failures = 0, failStatus = 500) {
  const p = `/hook-${unique()}`;
  const ep = { secrets: [], failures, failStatus, seen: new Map(), got: [] };
  endpoints.set(p, ep);
  return { path: p, url: receiverUrl + p, ep };
}

async function createWebhook(ep, fields = {}) {
  const r = await api('POST', '/api/v1/webhooks', { json: { url: ep.url, ...fields } });
  assert.equal(r.status, 201, r.text);
  ep.ep.secrets.push(r.json.secret);
  return r.json;
}

async function until(what, fn, ms = 20000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v) return v;
    await sleep(100);
  }
  assert.fail(`timed out waiting for ${what}`);
}

before(async () => {
  receiver = createServer(receive);
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${receiver.address().port}`;
});

// Deletes this run's endpoints, so they stop receiving.
async function deleteEndpoints() {
  const r = await api('GET', '/api/v1/webhooks?page_size=100');
  for (const w of r.json?.webhooks ?? []) {
    if (w.url.startsWith(receiverUrl)) await api('DELETE', `/api/v1/webhooks/${w.id}`);
  }
}

after(async () => {
  await deleteEndpoints();
  await new Promise((r2) => receiver.close(r2));
});

test('webhooks: create shows the whsec_ secret once; read, list, change, delete; URL and type rules', async () => {
  const ep = endpoint();
  const w = await createWebhook(ep, { event_types: ['user.created'] });
  assert.match(w.id, /^wh_[0-9a-z]{26}$/);
  assert.match(w.secret, /^whsec_[A-Za-z0-9+/=]{20,}$/);
  assert.equal(w.enabled, true);
  assert.deepEqual(w.event_types, ['user.created']);
  let r = await api('GET', `/api/v1/webhooks/${w.id}`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.secret, undefined, 'the secret is shown only at creation');
  assertNoNulls(assert, r.json);
  r = await api('GET', '/api/v1/webhooks?page_size=100');
  assert.ok(r.json.webhooks.some((x) => x.id === w.id));
  assert.ok(r.json.webhooks.every((x) => x.secret === undefined));
  r = await api('PATCH', `/api/v1/webhooks/${w.id}`, { json: { event_types: [], enabled: false } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.event_types, []);
  assert.equal(r.json.enabled, false);
  for (const body of [{ url: 'http://example.com/hook' }, { url: 'ftp://example.com/x' }, { url: 'https://user@example.com/' },
    { url: receiverUrl, event_types: ['token.nope'] }, { url: receiverUrl, enabled: 'yes' }, { url: receiverUrl, secret: 'mine' }, {}]) {
    assertProblem(assert, await api('POST', '/api/v1/webhooks', { json: body }), 400, 'invalid_argument');
  }
  const reader = await tokenWithScopes(['events:read']);
  assertProblem(assert, await api('GET', '/api/v1/webhooks', { token: reader }), 403, 'permission_denied');
  assertProblem(assert, await api('POST', '/api/v1/webhooks', { token: reader, json: { url: ep.url } }), 403, 'permission_denied');
  assert.equal((await api('DELETE', `/api/v1/webhooks/${w.id}`)).status, 204);
  assertProblem(assert, await api('GET', `/api/v1/webhooks/${w.id}`), 404, 'not_found');
  assertProblem(assert, await api('DELETE', `/api/v1/webhooks/${w.id}`), 404, 'not_found');
  // The webhook's own events.
  const ev = await until('webhook.created', async () => {
    const e = await api('GET', '/api/v1/events?types=webhook.created,webhook.updated,webhook.deleted&page_size=100');
    const mine = e.json.events.filter((x) => x.data.webhook_id === w.id);
    return mine.length === 3 ? mine : null;
  });
  assert.deepEqual(ev.map((e) => e.type), ['webhook.deleted', 'webhook.updated', 'webhook.created']);
});

test('webhooks: Standard Webhooks deliveries, filtered by type, verified by the standardwebhooks library', async () => {
  const ep = endpoint();
  const w = await createWebhook(ep, { event_types: ['user.created', 'user.deleted'] });
  const users = [];
  for (let i = 0; i < 3; i++) users.push(await createUser());
  await api('PATCH', `/api/v1/users/${users[0].id}`, { json: { given_name: 'Not delivered' } });
  await api('DELETE', `/api/v1/users/${users[2].id}`);
  const mine = () => ep.ep.got.filter((d) => users.some((u) => u.id === d.verified?.data.user_id));
  await until('four deliveries', () => mine().length >= 4);
  await sleep(500);
  assert.equal(mine().length, 4, 'user.updated is filtered out');
  for (const d of ep.ep.got) {
    assert.ok(d.verified, `signature verified: ${d.signature}`);
    assert.match(d.id, /^msg_[0-9a-z]{26}_[0-9a-z]{26}$/);
    assert.match(d.contentType, /^application\/json/);
    assert.ok(['user.created', 'user.deleted'].includes(d.verified.type));
    assert.equal(d.verified.data.type, d.verified.type);
    assert.match(d.verified.data.id, /^evt_/);
    assert.equal(d.verified.timestamp, d.verified.data.occurred_at);
  }
  assert.deepEqual(mine().filter((d) => d.verified.type === 'user.created').map((d) => d.verified.data.user_id).sort(), users.map((u) => u.id).sort());
  // Per endpoint in event order.
  const times = ep.ep.got.map((d) => d.verified.data.id);
  assert.deepEqual(times, [...times].sort());
  // Every attempt is recorded.
  const r = await api('GET', `/api/v1/webhooks/${w.id}/deliveries?page_size=100`);
  assert.equal(r.status, 200, r.text);
  assert.ok(r.json.deliveries.length >= 4);
  for (const d of r.json.deliveries) {
    assert.equal(d.state, 'delivered');
    assert.equal(d.attempts, 1);
    assert.equal(d.attempt_log[0].status_code, 200);
    assert.equal(d.attempt_log[0].response_excerpt, 'thanks');
  }
});

test('webhooks: a 500 is retried on schedule with the same webhook-id, then delivered', async () => {
  const ep = endpoint(1, 500);
  const w = await createWebhook(ep, { event_types: ['user.created'] });
  const user = await createUser();
  const mine = () => ep.ep.got.filter((d) => d.verified?.data.user_id === user.id);
  await until('the retry', () => mine().length >= 2);
  const [first, second] = mine();
  assert.equal(first.status, 500);
  assert.equal(second.status, 200);
  assert.equal(first.id, second.id, 'stable webhook-id');
  assert.equal(second.verified.data.user_id, user.id);
  const gap = second.at - first.at;
  // The first wait of the schedule is 1 s ± 20 % (plus at most one 100 ms poll).
  assert.ok(gap >= 750 && gap <= 2500, `retried after ${gap} ms`);
  const d = await until('delivered', async () => {
    const r = await api('GET', `/api/v1/webhooks/${w.id}/deliveries?page_size=100`);
    return r.json.deliveries.find((x) => x.id === first.id && x.state === 'delivered');
  });
  assert.equal(d.attempts, 2);
  assert.deepEqual(d.attempt_log.map((a) => a.status_code), [500, 200]);
  assert.equal(d.attempt_log[0].response_excerpt, 'try later');
});

test('webhooks: an endpoint that never answers 2xx is given up after the schedule, then replayed', async () => {
  const ep = endpoint(4, 503);
  const w = await createWebhook(ep, { event_types: ['user.created'] });
  const before = new Date(Date.now() - 1000).toISOString();
  const user = await createUser();
  const mine = () => ep.ep.got.filter((d) => d.verified?.data.user_id === user.id);
  await until('four attempts', () => mine().length >= 4, 30000);
  const msg = mine()[0].id;
  let r = await until('failed', async () => {
    const x = await api('GET', `/api/v1/webhooks/${w.id}/deliveries?page_size=100`);
    return x.json.deliveries.find((d) => d.id === msg && d.state === 'failed') ? x : null;
  });
  const failed = r.json.deliveries.find((d) => d.id === msg);
  assert.equal(failed.attempts, 4);
  assert.equal(failed.last_status, 503);
  // Every attempt with its fields, in the order they were made (ascending attempt number).
  const logged = (log) => log.map((a) => [a.attempt, a.status_code, a.response_excerpt, a.error]);
  assert.deepEqual(logged(failed.attempt_log), [1, 2, 3, 4].map((n) => [n, 503, 'try later', undefined]));
  const times = failed.attempt_log.map((a) => a.attempted_at);
  assert.ok(times.every((t) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(t)), times.join(' '));
  assert.deepEqual([...times].sort(), times, 'attempted_at ascending');
  assert.ok(failed.attempt_log.every((a) => Number.isInteger(a.latency_ms) && a.latency_ms >= 0));
  // Replay of that delivery: same webhook-id, delivered now.
  r = await api('POST', `/api/v1/webhooks/${w.id}/replay`, { json: { delivery_id: failed.id } });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.json.queued, 1);
  await until('the replay', () => mine().length >= 5);
  assert.equal(mine()[4].id, failed.id);
  assert.equal(mine()[4].status, 200);
  // The replay numbers its attempts from 1 again, listed after the earlier ones, none lost.
  const replayed1 = await until('the replay delivered', async () => {
    const x = await api('GET', `/api/v1/webhooks/${w.id}/deliveries?page_size=100`);
    return x.json.deliveries.find((d) => d.id === msg && d.state === 'delivered');
  });
  assert.deepEqual(logged(replayed1.attempt_log),
    [...[1, 2, 3, 4].map((n) => [n, 503, 'try later', undefined]), [1, 200, 'thanks', undefined]]);
  // Everything since a time (the endpoint's filter applied).
  r = await api('POST', `/api/v1/webhooks/${w.id}/replay`, { json: { since: before } });
  assert.equal(r.status, 202, r.text);
  assert.ok(r.json.queued >= 1);
  await until('the second replay', () => mine().length >= 6);
  assertProblem(assert, await api('POST', `/api/v1/webhooks/${w.id}/replay`, { json: {} }), 400, 'invalid_argument');
  assertProblem(assert, await api('POST', `/api/v1/webhooks/${w.id}/replay`, { json: { since: 'yesterday' } }), 400, 'invalid_argument');
  assertProblem(assert, await api('POST', `/api/v1/webhooks/${w.id}/replay`, { json: { delivery_id: 'msg_nope' } }), 404, 'not_found');
  // Each replay is a webhook.replayed event (the refused ones none), newest first.
  const replayed = (await api('GET', '/api/v1/events?types=webhook.replayed&page_size=100')).json.events
    .filter((e) => e.data.webhook_id === w.id);
  assert.deepEqual(replayed.map((e) => [e.data.delivery_id, e.data.since, e.data.queued]),
    [[undefined, before, r.json.queued], [failed.id, undefined, 1]]);
  assert.ok(replayed.every((e) => /^api_/.test(e.data.by)), 'the caller is named');
});

test('webhooks: a rotated secret signs together with the old one during the overlap', async () => {
  const ep = endpoint();
  const w = await createWebhook(ep, { event_types: ['user.created'] });
  const old = ep.ep.secrets[0];
  const r = await api('POST', `/api/v1/webhooks/${w.id}/secret`, { json: { overlap_seconds: 3600 } });
  assert.equal(r.status, 200, r.text);
  assert.match(r.json.secret, /^whsec_/);
  assert.notEqual(r.json.secret, old);
  assert.ok(r.json.previous_secret_expires_at);
  const u1 = await createUser();
  const d = await until('a delivery', () => ep.ep.got.find((x) => x.verified?.data.user_id === u1.id));
  assert.equal(d.signature.split(' ').length, 2, 'two v1 signatures');
  // Each secret alone verifies the delivery as sent.
  const headers = { 'webhook-id': d.id, 'webhook-timestamp': d.timestamp, 'webhook-signature': d.signature };
  for (const secret of [old, r.json.secret]) {
    assert.equal(new Webhook(secret).verify(d.body, headers).type, 'user.created');
  }
  assert.throws(() => new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(d.body, headers));
  // Without overlap only the new one signs.
  const r2 = await api('POST', `/api/v1/webhooks/${w.id}/secret`, { json: { overlap_seconds: 0 } });
  assert.equal(r2.status, 200, r2.text);
  ep.ep.secrets = [r2.json.secret];
  const u2 = await createUser();
  const d2 = await until('a second delivery', () => ep.ep.got.find((x) => x.verified?.data.user_id === u2.id));
  assert.equal(d2.signature.split(' ').length, 1);
});

// A resource and a public DCR client of it with `grantTypes`; signIn() runs the browser's
// sign-in (an e-mailed code) and consent, then the code exchange, and returns the token answer.
async function codeFlowClient(grantTypes) {
  const REDIRECT = 'http://127.0.0.1:3000/callback';
  const serverUrl = `https://wh-${unique()}.example.com/mcp`;
  let r = await api('POST', '/api/v1/resources', { json: { name: 'Webhook sign-in', server_url: serverUrl, dcr_enabled: true, scopes: [{ name: 'demo:read', description: 'Read' }] } });
  assert.equal(r.status, 201, r.text);
  const resource = r.json.id;
  r = await http(`/resources/${resource}/client_register`, { method: 'POST', json: { client_name: 'Webhook flow', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: grantTypes } });
  assert.equal(r.status, 201, r.text);
  const client = r.json;
  const signIn = async () => {
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${baseUrl}/oauth/authorize`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, state: 'x1', scope: 'demo:read', resource: serverUrl,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' })) authorize.searchParams.set(k, v);
    const page = await completeAuthorization(new Browser(), authorize.href, `wh-${unique()}@example.com`);
    const code = new URL(page.location).searchParams.get('code');
    const t = await http('/oauth/token', { method: 'POST', form: { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id } });
    assert.equal(t.status, 200, t.text);
    return t.json;
  };
  return { resource, client, signIn };
}

const claims = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url'));

test('webhooks: sign-in, consent and token events reach the endpoint, verified', async () => {
  const ep = endpoint();
  await createWebhook(ep, { event_types: ['user.login.succeeded', 'consent.granted', 'token.issued'] });
  const { resource, client, signIn } = await codeFlowClient(['authorization_code']);
  const user = claims((await signIn()).access_token).sub;
  const mine = () => ep.ep.got.filter((d) => d.verified?.data.client_id === client.client_id);
  await until('the sign-in, consent and token deliveries', () => mine().length >= 3);
  await sleep(300);
  const got = mine();
  assert.deepEqual(got.map((d) => d.verified.type).sort(), ['consent.granted', 'token.issued', 'user.login.succeeded']);
  for (const d of got) {
    assert.ok(d.verified, 'verified by standardwebhooks');
    assert.equal(d.verified.data.user_id, user);
    assert.equal(d.verified.data.client_id, client.client_id);
    assert.equal(d.verified.data.resource_id, resource);
    assert.equal(d.status, 200);
  }
  assert.equal(new Set(got.map((d) => d.id)).size, 3, 'one webhook-id per event');
});

// The transactional outbox of the hot path (docs/events.md, "Recording"): the events of a
// sign-in, a consent, a code exchange and refreshes are written with the change they describe,
// before the answer leaves, and nothing a request writes moves a per-type count (the delivery
// process does, sql/0090_event_outbox.sql). So while the test holds token.refreshed's count rows
// and the gaps a new one would go in, refreshes are still answered, and each answered refresh's
// event is readable at once. An event written after the answer moves its type's count in its
// transaction: it would wait on the held rows, unreadable, and die with its worker, which the
// test then kills (every oauth worker, SIGKILL) before it lets the rows go. Every event is
// delivered once afterwards.
test('webhooks: sign-in, consent, token.issued and token.refreshed are stored before their answers and survive oauth workers killed (SIGKILL)', async () => {
  const ep = endpoint();
  const types = ['user.login.succeeded', 'consent.granted', 'token.issued', 'token.refreshed'];
  await createWebhook(ep, { event_types: types });
  const { client, signIn } = await codeFlowClient(['authorization_code', 'refresh_token']);
  let tokens = await signIn();
  const user = claims(tokens.access_token).sub;
  const jtis = [claims(tokens.access_token).jti];
  const oauthMaster = masterPid('oauth');
  let killed = [];
  let stored;
  const hold = await dbHoldLocks("SELECT n FROM listing_counts WHERE scope = 'events:token.refreshed' FOR UPDATE");
  try {
    for (let i = 0; i < 8; i++) {
      const r = await http('/oauth/token', { method: 'POST', form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id } });
      // A worker that writes its events after answering waits on the held rows: once every
      // worker waits, a refresh is not answered (502).
      assert.equal(r.status, 200, `refresh ${i + 1}: ${r.text}`);
      tokens = r.json;
      jtis.push(claims(tokens.access_token).jti);
    }
    // Read back through the API: the sign-in, the consent, the exchange and every refresh.
    stored = await until('every answered event readable while the count rows are held', async () => {
      const r = await api('GET', `/api/v1/events?user_id=${user}&page_size=100`);
      assert.equal(r.status, 200, r.text);
      const got = r.json.events;
      const jtisSeen = new Set(got.filter((e) => e.type === 'token.issued' || e.type === 'token.refreshed').map((e) => e.data.jti));
      return ['user.login.succeeded', 'consent.granted'].every((t) => got.some((e) => e.type === t)) && jtis.every((j) => jtisSeen.has(j)) ? got : null;
    }, 10000);
    killed = childPids(oauthMaster);
    for (const pid of killed) process.kill(pid, 'SIGKILL');
  } finally {
    await hold.release();
  }
  await until('the oauth pool replaced', async () => {
    const now = childPids(oauthMaster);
    return now.length === killed.length && now.every((pid) => !killed.includes(pid));
  });
  assert.equal(stored.filter((e) => e.type === 'token.refreshed').length, 8);
  assert.equal(stored.filter((e) => e.type === 'token.issued').length, 1);
  // And each delivered once per webhook-id, verified.
  const mine = () => ep.ep.got.filter((d) => d.verified?.data.user_id === user);
  await until('every event delivered', () => mine().length >= 11);
  await sleep(300);
  const got = mine();
  assert.equal(new Set(got.map((d) => d.id)).size, 11, 'one webhook-id per event');
  assert.deepEqual(new Set(got.map((d) => d.verified.data.id)), new Set(stored.filter((e) => types.includes(e.type)).map((e) => e.id)));
  assert.deepEqual(new Set(got.filter((d) => d.verified.data.data.jti).map((d) => d.verified.data.data.jti)), new Set(jtis));
});

test('webhooks: deliveries to one receiver reuse their connections', async () => {
  await deleteEndpoints();
  // A receiver of its own, counting the TCP connections the delivery process opens.
  let connections = 0;
  const got = [];
  const own = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      got.push(req.headers['webhook-id']);
      res.end('ok');
    });
  });
  own.on('connection', () => connections++);
  await new Promise((r) => own.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${own.address().port}/hook`;
    const r = await api('POST', '/api/v1/webhooks', { json: { url, event_types: ['user.created'] } });
    assert.equal(r.status, 201, r.text);
    const users = [];
    for (let i = 0; i < 30; i++) users.push(await createUser());
    await until('30 deliveries', () => new Set(got).size >= 30);
    assert.equal(new Set(got).size, 30);
    // Without reuse every delivery would be a connection of its own.
    assert.ok(connections <= 10, `${connections} connections for ${got.length} deliveries`);
    await api('DELETE', `/api/v1/webhooks/${r.json.id}`);
  } finally {
    own.closeAllConnections();
    await new Promise((r) => own.close(r));
  }
});

test('webhooks: an endpoint failing for PORTCULLIS_WEBHOOK_DISABLE_AFTER_SECONDS is disabled, read back as a webhook.disabled event', async () => {
  // scripts/test sets the period to 12 s (a day in production); each new event is one more failure.
  const limitMs = 12000;
  const ep = endpoint(1e9, 500);
  const w = await createWebhook(ep, { event_types: ['user.created'] });
  const started = Date.now();
  const disabled = await until('the endpoint disabled', async () => {
    await createUser();
    await sleep(900);
    const r = await api('GET', `/api/v1/webhooks/${w.id}`);
    return r.json.enabled === false ? r.json : null;
  }, 60000);
  const after = Date.now() - started;
  assert.ok(after >= limitMs - 500, `disabled after ${after} ms, not before the limit`);
  assert.equal(disabled.disabled_reason, 'failing');
  assert.ok(ep.ep.got.length >= 2, 'it failed more than once');
  const ev = await until('the webhook.disabled event', async () => {
    const r = await api('GET', '/api/v1/events?types=webhook.disabled&page_size=100');
    assert.equal(r.status, 200, r.text);
    return r.json.events.find((e) => e.data.webhook_id === w.id);
  });
  assert.equal(ev.type, 'webhook.disabled');
  assert.equal(ev.data.url, ep.url);
  assert.equal(ev.data.last_error, 'HTTP 500');
  assert.equal(ev.data.failing_since, disabled.failing_since);
  // Disabled: new events are not delivered to it.
  const n = ep.ep.got.length;
  await createUser();
  await sleep(1500);
  assert.equal(ep.ep.got.length, n);
  // Enabled again, it starts from a clean slate.
  const again = await api('PATCH', `/api/v1/webhooks/${w.id}`, { json: { enabled: true } });
  assert.equal(again.status, 200, again.text);
  assert.equal(again.json.enabled, true);
  assert.equal(again.json.disabled_reason, undefined);
  assert.equal(again.json.failing_since, undefined);
  await api('DELETE', `/api/v1/webhooks/${w.id}`);
});

// The delivery process of the stack, by its pid file; restarted the way run-local starts it.
const pidFile = path.join(varDir, 'run', 'webhooks.pid');
function startDelivery() {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PORTCULLIS_')));
  const log = openSync(path.join(varDir, 'log', 'webhooks.log'), 'a');
  const child = spawn(path.join(binDir, 'portcullis-webhooks'), ['--config', configFile], { env, detached: true, stdio: ['ignore', log, log] });
  child.unref();
  writeFileSync(pidFile, `${child.pid}\n`);
  return child.pid;
}

// The suite's burst is what four writers create in a few seconds (a few hundred users);
// bench/webhooks-burst sets BENCH_WEBHOOK_BURST=10000 to keep eight writers going until that
// many events were made, faults included.
const burstTarget = Number(process.env.BENCH_WEBHOOK_BURST ?? 0);

test('webhooks: a burst survives a killed delivery process and a MariaDB restart: none lost (by webhook-id)', async () => {
  await deleteEndpoints();
  const ep = endpoint();
  await createWebhook(ep, { event_types: ['user.created'] });
  const created = new Set();
  let stop = false;
  const writer = async () => {
    while (!stop) {
      const r = await http('/api/v1/users', { method: 'POST', headers: { authorization: `Bearer ${await admin()}` }, json: { email: `burst-${unique()}@example.com` } }).catch(() => null);
      if (r?.status === 201) created.add(r.json.id);
    }
  };
  const writers = Array.from({ length: burstTarget ? 8 : 4 }, writer);
  await until('deliveries under way', () => ep.ep.got.length >= 20);
  // Kill the delivery process in the middle of a round, then start another.
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  process.kill(pid, 'SIGKILL');
  await sleep(300);
  startDelivery();
  await sleep(500);
  runLocal('db-stop');
  await sleep(1500);
  runLocal('db-start');
  await until('ready again', async () => (await http('/readyz')).status === 200, 30000);
  await sleep(1500);
  if (burstTarget) await until(`${burstTarget} users created`, () => created.size >= burstTarget, 1200000);
  stop = true;
  await Promise.all(writers);
  assert.ok(created.size >= 50, `a burst: ${created.size} users`);
  // Every api worker writes what it holds on its next request: keep them all busy a moment.
  const received = () => new Set(ep.ep.got.filter((d) => d.verified).map((d) => d.verified.data.user_id));
  await until('every created user delivered', async () => {
    await Promise.all(Array.from({ length: 8 }, () => api('GET', '/api/v1/webhooks?page_size=1')));
    const got = received();
    return [...created].every((id) => got.has(id));
  }, Math.max(60000, burstTarget * 30));
  // At least once: duplicates only as repeats of one webhook-id, never two ids for one event.
  const idsByEvent = new Map();
  for (const d of ep.ep.got) {
    assert.ok(d.verified, 'every delivery verifies');
    const set = idsByEvent.get(d.verified.data.id) ?? new Set();
    set.add(d.id);
    idsByEvent.set(d.verified.data.id, set);
  }
  for (const [event, ids] of idsByEvent) assert.equal(ids.size, 1, `${event} has one webhook-id`);
  const distinct = new Set(ep.ep.got.map((d) => d.id)).size;
  console.log(`burst: ${created.size} users, ${ep.ep.got.length} deliveries, ${distinct} distinct webhook-ids`);
  assert.ok(distinct >= created.size);
});
