// The audit trail (contract §11, docs/events.md): every event type the service records today is
// produced by a real flow — sign-in by e-mailed code, consent, DCR, the token endpoint, the
// nginx auth_request validator, the management API — and read back through GET /api/v1/events
// with each filter; paging newest first that stays stable while events arrive; 400s for bad
// filters; the per-user scope access log; retention by the CLI.
import { test, before, after } from 'node:test';
import { createServer } from 'node:http';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { http, baseUrl, env, sleep, assertProblem, assertNoNulls, cli } from './harness.mjs';
import { api, tokenWithScopes, createOrg, createUser, addMember, unique } from './management.mjs';
import { Browser, completeAuthorization } from './browser.mjs';
import { startProtectedNginx, validateLocation } from './mcp-nginx.mjs';
import { tenant, scim, patch, USER, GROUP } from './scim.mjs';

const REDIRECT = 'http://127.0.0.1:3000/callback';
const port = Number(env.PORTCULLIS_BASE_URL.split(':').pop()) + 5; // this test's MCP server nginx
const mcpPath = `/mcp-events-${randomBytes(4).toString('hex')}`;
const serverUrl = `http://127.0.0.1:${port}${mcpPath}`;
const verifierOf = () => randomBytes(32).toString('base64url');
const challengeOf = (v) => createHash('sha256').update(v).digest('base64url');

let started; // RFC 3339, just before the flows
const ids = {}; // what the flows made: user, resource, client, org, …
let nginx;
let upstream;

// GET /api/v1/events?query, waiting (the event phase runs after each response) until at least
// `min` events match `predicate`.
async function eventsWhere(query, predicate = () => true, min = 1, nudge = async () => {}) {
  let last;
  for (let i = 0; i < 60; i++) {
    await nudge();
    last = await api('GET', `/api/v1/events?${query}`);
    assert.equal(last.status, 200, last.text);
    const hits = last.json.events.filter(predicate);
    if (hits.length >= min) return hits;
    await sleep(150);
  }
  assert.fail(`no events for ${query}: ${last.text.slice(0, 500)}`);
}

function authorizeUrl(client, scope, verifier) {
  const u = new URL(baseUrl + '/oauth/authorize');
  const state = randomBytes(4).toString('hex');
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, state, code_challenge: challengeOf(verifier), code_challenge_method: 'S256', scope, resource: serverUrl })) {
    u.searchParams.set(k, v);
  }
  return u.href;
}

async function token(form) {
  const r = await http('/oauth/token', { method: 'POST', form });
  return r;
}

before(async () => {
  started = new Date(Date.now() - 2000).toISOString().replace(/\.\d+Z$/, 'Z');
  // Management API: resource, organization, user, membership, domain, API client.
  let r = await api('POST', '/api/v1/resources', {
    json: { name: 'Events test', server_url: serverUrl, dcr_enabled: true, scopes: [{ name: 'demo:read', description: 'Read' }, { name: 'demo:write', description: 'Write' }] },
  });
  assert.equal(r.status, 201, r.text);
  ids.resource = r.json.id;
  r = await api('PATCH', `/api/v1/resources/${ids.resource}`, { json: { name: 'Events test (renamed)' } });
  assert.equal(r.status, 200, r.text);
  r = await api('POST', '/api/v1/resources', { json: { name: 'Doomed', server_url: `https://doomed-${unique()}.example.com/mcp`, scopes: [] } });
  ids.doomedResource = r.json.id;
  assert.equal((await api('DELETE', `/api/v1/resources/${ids.doomedResource}`)).status, 204);

  const org = await createOrg();
  ids.org = org.id;
  assert.equal((await api('PATCH', `/api/v1/organizations/${ids.org}`, { json: { display_name: 'Renamed' } })).status, 200);
  const doomedOrg = await createOrg();
  ids.doomedOrg = doomedOrg.id;
  assert.equal((await api('DELETE', `/api/v1/organizations/${ids.doomedOrg}`)).status, 204);
  const member = await createUser();
  ids.member = member.id;
  await addMember(ids.org, ids.member);
  await addMember(ids.org, ids.member, { roles: [{ name: 'admin' }], metadata: {} });
  assert.equal((await api('DELETE', `/api/v1/organizations/${ids.org}/users/${ids.member}`)).status, 204);
  assert.equal((await api('PATCH', `/api/v1/users/${ids.member}`, { json: { given_name: 'Ada' } })).status, 200);
  assert.equal((await api('PATCH', `/api/v1/users/${ids.member}`, { json: { active: false } })).status, 200);
  const doomedUser = await createUser();
  ids.doomedUser = doomedUser.id;
  assert.equal((await api('DELETE', `/api/v1/users/${ids.doomedUser}`)).status, 204);
  r = await api('POST', `/api/v1/organizations/${ids.org}/domains`, { json: { domain: `ev-${unique()}.example.com` } });
  assert.equal(r.status, 201, r.text);
  ids.domain = r.json.id;
  r = await api('POST', `/api/v1/organizations/${ids.org}/domains/${ids.domain}/verify`, { json: { method: 'admin' } });
  assert.equal(r.status, 200, r.text);
  assert.equal((await api('DELETE', `/api/v1/organizations/${ids.org}/domains/${ids.domain}`)).status, 204);
  r = await api('POST', '/api/v1/clients', { json: { name: `ev-${unique()}`, scopes: ['users:read'] } });
  ids.apiClient = r.json.client_id;
  assert.equal((await api('DELETE', `/api/v1/clients/${ids.apiClient}`)).status, 204);
  r = await api('POST', `/api/v1/resources/${ids.resource}/clients`, { json: { client_name: 'Pre-registered', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } });
  assert.equal(r.status, 201, r.text);
  ids.preClient = r.json.client_id;
  assert.equal((await api('DELETE', `/api/v1/resources/${ids.resource}/clients/${encodeURIComponent(ids.preClient)}`)).status, 204);

  // DCR, then the authorization code flow with sign-in and consent.
  r = await http(`/resources/${ids.resource}/client_register`, {
    method: 'POST',
    json: { client_name: 'Events flow', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] },
  });
  assert.equal(r.status, 201, r.text);
  const client = r.json;
  ids.client = client.client_id;
  const email = `ev-${unique()}@example.com`;
  const verifier = verifierOf();
  const page = await completeAuthorization(new Browser(), authorizeUrl(client, 'demo:read', verifier), email);
  const code = new URL(page.location).searchParams.get('code');
  assert.ok(code, page.location);
  r = await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id });
  assert.equal(r.status, 200, r.text);
  const first = r.json;
  const claims = JSON.parse(Buffer.from(first.access_token.split('.')[1], 'base64url'));
  ids.user = claims.sub;
  r = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.client_id });
  assert.equal(r.status, 200, r.text);
  // The rotated-out refresh token again: reuse detected.
  r = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.client_id });
  assert.equal(r.status, 400, r.text);
  // A new grant to revoke explicitly.
  const v2 = verifierOf();
  const browser2 = new Browser();
  const page2 = await completeAuthorization(browser2, authorizeUrl(client, 'demo:read', v2), email);
  r = await token({ grant_type: 'authorization_code', code: new URL(page2.location).searchParams.get('code'), code_verifier: v2, redirect_uri: REDIRECT, client_id: client.client_id });
  assert.equal(r.status, 200, r.text);
  ids.liveAccessToken = r.json.access_token;
  assert.equal((await http('/oauth/revoke', { method: 'POST', form: { token: r.json.refresh_token, client_id: client.client_id } })).status, 200);
  // Consent denied by another user; a sign-in that fails on a wrong code.
  const denier = `ev-deny-${unique()}@example.com`;
  const denied = await completeAuthorization(new Browser(), authorizeUrl(client, 'demo:read', verifierOf()), denier, 'deny');
  assert.equal(new URL(denied.location).searchParams.get('error'), 'access_denied');
  const b3 = new Browser();
  const login = await b3.follow(authorizeUrl(client, 'demo:read', verifierOf()));
  const sent = await b3.submit(login, 'email', { email: `ev-wrong-${unique()}@example.com` });
  await b3.submit(sent, 'code', { code: '000000' });

  // The nginx auth_request validator in front of this test's MCP server (a stub upstream).
  upstream = createServer((req, res) => res.end('ok'));
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const up = upstream.address().port;
  nginx = await startProtectedNginx({
    port, resourceId: ids.resource, name: `events-nginx-${port}`,
    serverBody: `${validateLocation('read', 'demo:read')}${validateLocation('write', 'demo:read demo:write')}
        location ${mcpPath} {
            auth_request /_portcullis/auth/read;
            include portcullis/mcp-protect.conf;
            proxy_pass http://127.0.0.1:${up};
        }
        location ${mcpPath}/write {
            auth_request /_portcullis/auth/write;
            include portcullis/mcp-protect.conf;
            proxy_pass http://127.0.0.1:${up};
        }`,
  });
});

after(async () => {
  nginx?.stop();
  await new Promise((resolve) => (upstream ? upstream.close(resolve) : resolve()));
});

test('events: every type produced by the flows is read back with its type and subject filters', async () => {
  const cases = [
    ['resource.created', 'resource_id', ids.resource],
    ['resource.updated', 'resource_id', ids.resource],
    ['resource.deleted', 'resource_id', ids.doomedResource],
    ['organization.created', 'organization_id', ids.org],
    ['organization.updated', 'organization_id', ids.org],
    ['organization.deleted', 'organization_id', ids.doomedOrg],
    ['organization.membership.created', 'organization_id', ids.org],
    ['organization.membership.updated', 'user_id', ids.member],
    ['organization.membership.deleted', 'user_id', ids.member],
    ['user.created', 'user_id', ids.member],
    ['user.updated', 'user_id', ids.member],
    ['user.deactivated', 'user_id', ids.member],
    ['user.deleted', 'user_id', ids.doomedUser],
    ['domain.created', 'organization_id', ids.org],
    ['domain.verified', 'organization_id', ids.org],
    ['domain.deleted', 'organization_id', ids.org],
    ['api_client.created', 'client_id', ids.apiClient],
    ['api_client.deleted', 'client_id', ids.apiClient],
    ['client.registered', 'client_id', ids.preClient],
    ['client.deleted', 'client_id', ids.preClient],
    ['client.registered', 'client_id', ids.client],
    ['user.login.succeeded', 'user_id', ids.user],
    ['consent.granted', 'user_id', ids.user],
    ['token.issued', 'user_id', ids.user],
    ['token.refreshed', 'client_id', ids.client],
    ['token.refresh_reuse_detected', 'user_id', ids.user],
    ['token.revoked', 'resource_id', ids.resource],
    ['consent.denied', 'client_id', ids.client],
    ['user.login.failed', 'client_id', ids.client],
  ];
  for (const [type, key, id] of cases) {
    const hits = await eventsWhere(`types=${type}&${key}=${encodeURIComponent(id)}`);
    for (const e of hits) {
      assert.equal(e.type, type);
      assert.equal(e[key], id, `${type} by ${key}`);
      assert.match(e.id, /^evt_[0-9a-z]{26}$/);
      assert.match(e.occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assertNoNulls(assert, e);
    }
  }
  // The subject filters select: the user's events name the user, and no other.
  const mine = await eventsWhere(`user_id=${ids.user}&page_size=100`, () => true, 5);
  assert.ok(mine.every((e) => e.user_id === ids.user));
  const types = new Set(mine.map((e) => e.type));
  for (const t of ['user.login.succeeded', 'consent.granted', 'token.issued', 'token.refreshed']) assert.ok(types.has(t), t);
  // Several types at once; the time window.
  const two = await eventsWhere(`types=consent.granted,token.issued&user_id=${ids.user}`, () => true, 2);
  assert.ok(two.every((e) => ['consent.granted', 'token.issued'].includes(e.type)));
  await eventsWhere(`user_id=${ids.user}&start_time=${started}`);
  const future = new Date(Date.now() + 3600e3).toISOString();
  let r = await api('GET', `/api/v1/events?user_id=${ids.user}&start_time=${future}`);
  assert.equal(r.json.events.length, 0);
  r = await api('GET', `/api/v1/events?user_id=${ids.user}&end_time=${started}`);
  assert.equal(r.json.events.length, 0);
  assert.equal(r.json.total_size, 0);
  // data fields of a few types (docs/events.md)
  const [issued] = await eventsWhere(`types=token.issued&user_id=${ids.user}`);
  assert.equal(issued.data.grant_type, 'authorization_code');
  assert.equal(issued.data.scope, 'demo:read');
  assert.equal(issued.resource_id, ids.resource);
  const [failed] = await eventsWhere(`types=user.login.failed&client_id=${ids.client}`);
  assert.equal(failed.data.reason, 'wrong_code');
  assert.equal(failed.data.code, undefined);
});

test('events: SCIM provisioning, directories, SSO connections and webhooks are read back through the API', async () => {
  const { org, directory, token } = await tenant();
  const dirBase = `/api/v1/organizations/${org.id}/directories/${directory.id}`;
  assert.equal((await api('POST', `${dirBase}/tokens`)).status, 201);
  const userName = `ev-${unique()}@example.net`;
  const u = await scim(token, 'POST', '/Users', { json: { schemas: [USER], userName, name: { givenName: 'Ev', familyName: 'Ents' }, active: true } });
  assert.equal(u.status, 201, u.text);
  assert.equal((await scim(token, 'PATCH', `/Users/${u.json.id}`, { json: patch({ op: 'replace', path: 'name.givenName', value: 'Eve' }) })).status, 200);
  assert.equal((await scim(token, 'PATCH', `/Users/${u.json.id}`, { json: patch({ op: 'replace', path: 'active', value: false }) })).status, 200);
  assert.equal((await scim(token, 'DELETE', `/Users/${u.json.id}`)).status, 204);
  const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `Ev ${unique()}` } });
  assert.equal(g.status, 201, g.text);
  assert.equal((await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'replace', path: 'displayName', value: `Ev2 ${unique()}` }) })).status < 300, true);
  assert.equal((await scim(token, 'DELETE', `/Groups/${g.json.id}`)).status, 204);
  assert.equal((await api('DELETE', dirBase)).status, 204);
  const connBase = `/api/v1/organizations/${org.id}/connections`;
  const c = await api('POST', connBase, { json: { type: 'oidc', name: 'Ev IdP', issuer: 'https://idp.example.com', client_id: 'ev', client_secret: 'ev-secret' } });
  assert.equal(c.status, 201, c.text);
  assert.equal((await api('PATCH', `${connBase}/${c.json.id}`, { json: { name: 'Ev IdP 2' } })).status, 200);
  assert.equal((await api('DELETE', `${connBase}/${c.json.id}`)).status, 204);
  const w = await api('POST', '/api/v1/webhooks', { json: { url: 'https://hooks.example.com/events-test', event_types: ['user.created'] } });
  assert.equal(w.status, 201, w.text);
  assert.equal((await api('PATCH', `/api/v1/webhooks/${w.json.id}`, { json: { enabled: false } })).status, 200);
  assert.ok((await api('POST', `/api/v1/webhooks/${w.json.id}/secret`, { json: { overlap_seconds: 60 } })).status < 300);
  assert.equal((await api('DELETE', `/api/v1/webhooks/${w.json.id}`)).status, 204);
  const byOrg = ['directory.created', 'directory.token.rotated', 'directory.deleted', 'scim.user.created',
    'scim.user.updated', 'scim.user.deactivated', 'scim.user.deleted', 'scim.group.created', 'scim.group.updated',
    'scim.group.deleted', 'connection.created', 'connection.updated', 'connection.deleted'];
  for (const type of byOrg) {
    const hits = await eventsWhere(`types=${type}&organization_id=${org.id}`);
    for (const e of hits) {
      assert.equal(e.type, type);
      assert.equal(e.organization_id, org.id);
      assertNoNulls(assert, e);
    }
  }
  const [created] = await eventsWhere(`types=scim.user.created&organization_id=${org.id}`);
  assert.equal(created.data.directory_id, directory.id);
  assert.equal(created.user_id, u.json.id);
  for (const type of ['webhook.created', 'webhook.updated', 'webhook.secret_rotated', 'webhook.deleted']) {
    const hits = await eventsWhere(`types=${type}&page_size=100`, (e) => e.data.webhook_id === w.json.id);
    assert.ok(hits.every((e) => e.type === type));
  }
});

test('events: the validator records token.validated per user and scope, and the access log sums it', async () => {
  const call = (p, auth) => fetch(nginx.url + p, { headers: auth ? { authorization: `Bearer ${auth}` } : {} });
  // A live access token of the user (the revoked grant's is refused).
  const verifier = verifierOf();
  const reg = await http(`/resources/${ids.resource}/client_register`, {
    method: 'POST', json: { client_name: 'Validator flow', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
  });
  const client = reg.json;
  const email = (await api('GET', `/api/v1/users/${ids.user}`)).json.email;
  const page = await completeAuthorization(new Browser(), authorizeUrl(client, 'demo:read', verifier), email);
  const t = await token({ grant_type: 'authorization_code', code: new URL(page.location).searchParams.get('code'), code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id });
  assert.equal(t.status, 200, t.text);
  for (let i = 0; i < 3; i++) assert.equal((await call(mcpPath, t.json.access_token)).status, 200);
  assert.equal((await call(`${mcpPath}/write`, t.json.access_token)).status, 403);
  assert.equal((await call(mcpPath)).status, 401);
  // The validator writes its counts at most once a second per worker, on a later request: keep
  // a trickle of requests going while waiting.
  const nudge = async () => void (await call(mcpPath));
  const ok = await eventsWhere(`types=token.validated&user_id=${ids.user}&resource_id=${ids.resource}`, (e) => e.data.result === 'allowed', 1, nudge);
  assert.equal(ok[0].client_id, client.client_id);
  assert.equal(ok[0].data.scopes_required, 'demo:read');
  assert.equal(ok[0].data.scopes_granted, 'demo:read');
  await eventsWhere(`types=token.validated&user_id=${ids.user}&resource_id=${ids.resource}`, () => true, 1, nudge);
  for (let i = 0; i < 40; i++) {
    const all = await api('GET', `/api/v1/events?types=token.validated&user_id=${ids.user}&resource_id=${ids.resource}&page_size=100`);
    if (all.json.events.filter((e) => e.data.result === 'allowed').reduce((n, e) => n + e.data.count, 0) >= 3) break;
    await nudge();
    await sleep(250);
  }
  await eventsWhere(`types=token.validated&user_id=${ids.user}`, (e) => e.data.result === 'insufficient_scope', 1, nudge);
  const failed = await eventsWhere(`types=token.validation_failed&resource_id=${ids.resource}`, () => true, 1, nudge);
  assert.equal(failed[0].data.reason, 'no_token');
  // The access log of the user.
  const r = await api('GET', `/api/v1/users/${ids.user}/access`);
  assert.equal(r.status, 200, r.text);
  const read = r.json.access.find((a) => a.resource_id === ids.resource && a.scope === 'demo:read');
  assert.ok(read, r.text);
  assert.ok(read.grant_time);
  assert.ok(read.last_used_time);
  assert.ok(read.validation_count >= 4, r.text);
  const write = r.json.access.find((a) => a.resource_id === ids.resource && a.scope === 'demo:write');
  assert.equal(write?.last_failure?.result, 'insufficient_scope', r.text);
  assertProblem(assert, await api('GET', `/api/v1/users/usr_${'0'.repeat(26)}/access`), 404, 'not_found');
});

test('events: newest first, keyset pages stay stable while events arrive', async () => {
  const user = await createUser();
  for (let i = 0; i < 5; i++) {
    assert.equal((await api('PATCH', `/api/v1/users/${user.id}`, { json: { given_name: `N${i}` } })).status, 200);
  }
  await eventsWhere(`user_id=${user.id}`, () => true, 6);
  let r = await api('GET', `/api/v1/events?user_id=${user.id}&page_size=2`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.total_size, 6);
  assert.equal(r.json.prev_page_token, '');
  const page1 = r.json.events;
  assert.equal(page1.length, 2);
  assert.ok(page1[0].occurred_at >= page1[1].occurred_at);
  // Events arriving meanwhile go in front of page 1, and never shift the pages after it.
  await api('PATCH', `/api/v1/users/${user.id}`, { json: { given_name: 'Late' } });
  await eventsWhere(`user_id=${user.id}`, () => true, 7);
  const seen = page1.map((e) => e.id);
  let next = r.json.next_page_token;
  while (next) {
    r = await api('GET', `/api/v1/events?user_id=${user.id}&page_size=2&page_token=${encodeURIComponent(next)}`);
    assert.equal(r.status, 200, r.text);
    seen.push(...r.json.events.map((e) => e.id));
    next = r.json.next_page_token;
  }
  assert.equal(seen.length, 6, 'the first six, each once');
  assert.equal(new Set(seen).size, 6);
  assert.equal(r.json.events.at(-1).type, 'user.created', 'the oldest comes last');
  // Back from the last page.
  const back = await api('GET', `/api/v1/events?user_id=${user.id}&page_size=2&page_token=${encodeURIComponent(r.json.prev_page_token)}`);
  assert.equal(back.status, 200, back.text);
  assert.deepEqual(back.json.events.map((e) => e.id), seen.slice(2, 4));
  // A token only works with the filter that issued it.
  const other = await api('GET', `/api/v1/events?user_id=${ids.user}&page_size=2&page_token=${encodeURIComponent(back.json.next_page_token)}`);
  assertProblem(assert, other, 400, 'invalid_argument');
});

test('events: bad filters are 400, the scope is events:read', async () => {
  for (const q of ['types=token.nope', 'types=token.issued,', 'user_id=usr_x', 'user_id=org_abc', 'resource_id=nope',
    'organization_id=bad%20id', 'start_time=yesterday', 'end_time=2026-11-21', 'start_time=2026-11-21T10:00:00Z&end_time=2026-11-21T09:00:00Z',
    'page_size=0', 'page_size=101', 'page_token=garbage', 'types=token.issued&types=token.revoked']) {
    assertProblem(assert, await api('GET', `/api/v1/events?${q}`), 400, 'invalid_argument');
  }
  const reader = await tokenWithScopes(['users:read']);
  assertProblem(assert, await api('GET', '/api/v1/events', { token: reader }), 403, 'permission_denied');
  assertProblem(assert, await api('GET', `/api/v1/users/${ids.user}/access`, { token: reader }), 403, 'permission_denied');
  assertProblem(assert, await api('GET', '/api/v1/events', { token: null }), 401, 'unauthenticated');
  const auditor = await tokenWithScopes(['events:read']);
  const r = await api('GET', '/api/v1/events?page_size=1', { token: auditor });
  assert.equal(r.status, 200, r.text);
});

test('events: `portcullis events prune` deletes only what is older than the retention', async () => {
  const out = cli('events', 'prune', '--older-than', String(10 * 365 * 86400), '--batch', '100');
  assert.match(out, /^\d+\n$/);
  await eventsWhere(`user_id=${ids.user}`);
  assert.throws(() => cli('events', 'prune', '--batch', '0'));
});
