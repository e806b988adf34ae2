// The user listings of contract §8: GET /api/v1/organizations/{id}/users and GET /api/v1/users.
// Keyset pages walked both ways, tokens at the ends, total_size on every page, stability while
// users are added and removed mid-walk, memberships per listing, and every bad input. Every
// response is checked against docs/openapi.yaml.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { assertProblem } from './harness.mjs';
import { api, createOrg, createUser, addMember, tokenWithScopes } from './management.mjs';

const orgUsers = (orgId, query = '') => api('GET', `/api/v1/organizations/${orgId}/users${query}`);
const envUsers = (query = '') => api('GET', `/api/v1/users${query}`);
const q = (pageSize, token) => `?page_size=${pageSize}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`;

// 230 members of `big` (created one after the other, so in listing order), 10 of whom are
// also members of `small`, and 5 members of `small` only.
let big;
let small;
let members = [];
let smallOnly = [];
before(async () => {
  big = await createOrg();
  small = await createOrg();
  members = [];
  for (let i = 0; i < 230; i++) members.push(await createUser());
  // Memberships in parallel batches: the listing orders by the user's creation, not the join.
  const batches = [];
  for (let i = 0; i < members.length; i += 20) batches.push(members.slice(i, i + 20));
  for (const batch of batches) {
    await Promise.all(batch.map((u, j) => addMember(big.id, u.id, { roles: [{ name: j % 2 ? 'member' : 'admin' }], metadata: { n: j } })));
  }
  for (const u of members.slice(100, 110)) await addMember(small.id, u.id, { roles: [{ name: 'guest' }], metadata: {} });
  for (let i = 0; i < 5; i++) {
    const u = await createUser();
    smallOnly.push(u);
    await addMember(small.id, u.id);
  }
});

// Walks a listing from its first page to its last with next_page_token, then back with
// prev_page_token; returns the pages of both walks (the backward walk in forward order).
async function walk(list, pageSize) {
  const forward = [];
  let r = await list(q(pageSize));
  for (;;) {
    assert.equal(r.status, 200, r.text);
    forward.push(r.json);
    if (!r.json.next_page_token) break;
    assert.ok(forward.length < 1000, 'the walk ends');
    r = await list(q(pageSize, r.json.next_page_token));
  }
  const backward = [forward.at(-1)];
  let token = forward.at(-1).prev_page_token;
  while (token) {
    r = await list(q(pageSize, token));
    assert.equal(r.status, 200, r.text);
    backward.unshift(r.json);
    token = r.json.prev_page_token;
    assert.ok(backward.length < 1000, 'the walk ends');
  }
  return { forward, backward };
}

const ids = (pages) => pages.flatMap((p) => p.users.map((u) => u.id));

test('organization listing: 230 users at page size 100, forward and back', async () => {
  const { forward, backward } = await walk((query) => orgUsers(big.id, query), 100);
  assert.deepEqual(forward.map((p) => p.users.length), [100, 100, 30]);
  assert.deepEqual(ids(forward), members.map((u) => u.id), 'every member once, in creation order');
  for (const p of forward) assert.equal(p.total_size, 230);
  assert.equal(forward[0].prev_page_token, '', 'nothing before the first page');
  assert.equal(forward.at(-1).next_page_token, '', 'nothing after the last page');
  assert.ok(forward[0].next_page_token && forward[1].next_page_token && forward[1].prev_page_token);
  // The way back gives the same pages.
  assert.equal(backward.length, 3);
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(backward[i].users, forward[i].users, `page ${i}`);
    assert.equal(backward[i].total_size, 230);
  }
  assert.equal(backward[0].prev_page_token, '');
  // The organization listing shows only that organization's membership.
  const user = forward[1].users.find((u) => u.id === members[105].id);
  assert.equal(user.memberships.length, 1);
  assert.equal(user.memberships[0].organization_id, big.id);
  assert.deepEqual(user.memberships[0].roles, [{ name: 'member' }]);
  assert.equal(user.memberships[0].provisioned_by, 'api');
  assert.equal(user.email, members[105].email);
  // Default page size: 50.
  const first = await orgUsers(big.id);
  assert.equal(first.json.users.length, 50);
  assert.deepEqual(first.json.users.map((u) => u.id), members.slice(0, 50).map((u) => u.id));
});

test('organization listing: a small organization, its own memberships only', async () => {
  const r = await orgUsers(small.id);
  assert.equal(r.status, 200);
  assert.equal(r.json.total_size, 15);
  assert.equal(r.json.next_page_token, '');
  assert.equal(r.json.prev_page_token, '');
  assert.deepEqual(r.json.users.map((u) => u.id), [...members.slice(100, 110), ...smallOnly].map((u) => u.id));
  for (const u of r.json.users) {
    assert.deepEqual(u.memberships.map((m) => m.organization_id), [small.id]);
  }
  const empty = await orgUsers((await createOrg()).id);
  assert.deepEqual(empty.json, { users: [], next_page_token: '', prev_page_token: '', total_size: 0 });
});

test('environment listing: users of several organizations, all their memberships', async () => {
  const { forward, backward } = await walk(envUsers, 100);
  const all = ids(forward);
  assert.equal(new Set(all).size, all.length, 'no user twice');
  assert.deepEqual(ids(backward), all, 'the way back gives the same users');
  for (const p of forward) assert.equal(p.total_size, all.length, 'total_size counts every user');
  assert.equal(forward[0].prev_page_token, '');
  assert.equal(forward.at(-1).next_page_token, '');
  // Ours appear in creation order, among everyone else's.
  const mine = [...members, ...smallOnly].map((u) => u.id);
  const positions = mine.map((id) => all.indexOf(id));
  assert.ok(positions.every((p) => p >= 0));
  assert.deepEqual([...positions].sort((a, b) => a - b), positions);
  const byId = new Map(forward.flatMap((p) => p.users).map((u) => [u.id, u]));
  assert.deepEqual(byId.get(members[100].id).memberships.map((m) => m.organization_id).sort(), [big.id, small.id].sort());
  assert.deepEqual(byId.get(members[0].id).memberships.map((m) => m.organization_id), [big.id]);
  assert.deepEqual(byId.get(smallOnly[0].id).memberships.map((m) => m.organization_id), [small.id]);
});

test('organization listing: users added and removed mid-walk cause no duplicate and no skip', async () => {
  const org = await createOrg();
  const users = [];
  for (let i = 0; i < 60; i++) users.push(await createUser());
  for (const u of users) await addMember(org.id, u.id);
  const seen = [];
  let r = await orgUsers(org.id, q(20));
  seen.push(...r.json.users.map((u) => u.id));
  assert.equal(r.json.total_size, 60);
  // Between pages: a new member (newest, so at the end), one removed from the page just
  // read, one removed from a page not read yet, and an older user joining.
  const late = await createUser();
  await addMember(org.id, late.id);
  assert.equal((await api('DELETE', `/api/v1/organizations/${org.id}/users/${users[5].id}`)).status, 204);
  assert.equal((await api('DELETE', `/api/v1/organizations/${org.id}/users/${users[45].id}`)).status, 204);
  const older = members[3];
  await addMember(org.id, older.id);
  let expected = 60 + 1 - 2 + 1;
  while (r.json.next_page_token) {
    r = await orgUsers(org.id, q(20, r.json.next_page_token));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.total_size, expected, 'total_size follows the changes');
    seen.push(...r.json.users.map((u) => u.id));
    // Another change while walking: a user deleted entirely.
    if (expected === 60) {
      assert.equal((await api('DELETE', `/api/v1/users/${users[50].id}`)).status, 204);
      expected = 59;
    }
  }
  assert.equal(new Set(seen).size, seen.length, 'no duplicates');
  const stayed = users.filter((_, i) => i !== 5 && i !== 45 && i !== 50).map((u) => u.id);
  for (const id of stayed) assert.ok(seen.includes(id), `${id} was not skipped`);
  assert.ok(seen.includes(late.id), 'a user added behind the walk is reached');
  assert.ok(!seen.includes(older.id), 'a user created before the walk position is not shown mid-walk');
  assert.ok(!seen.includes(users[45].id) && !seen.includes(users[50].id), 'removed users are gone');
  const last = await orgUsers(org.id, q(100));
  assert.equal(last.json.total_size, 59);
  assert.equal(last.json.users.length, 59);
});

test('environment listing: a user added mid-walk never causes a duplicate or a skip', async () => {
  const pages = [];
  let r = await envUsers(q(50));
  pages.push(r.json);
  const extra = await createUser();
  const gone = await createUser();
  while (r.json.next_page_token) {
    r = await envUsers(q(50, r.json.next_page_token));
    pages.push(r.json);
    if (pages.length === 2) assert.equal((await api('DELETE', `/api/v1/users/${gone.id}`)).status, 204);
  }
  const seen = ids(pages);
  assert.equal(new Set(seen).size, seen.length);
  for (const u of [...members, ...smallOnly]) assert.ok(seen.includes(u.id));
  assert.ok(seen.includes(extra.id));
  assert.equal(pages.at(-1).total_size, pages[0].total_size + 1);
});

test('listings: total_size stays exact through creates, memberships and deletes', async () => {
  const base = (await envUsers(q(1))).json.total_size;
  const org = await createOrg();
  const a = await createUser();
  const b = await createUser();
  assert.equal((await envUsers(q(1))).json.total_size, base + 2);
  await addMember(org.id, a.id);
  await addMember(org.id, b.id);
  await addMember(org.id, b.id, { roles: [{ name: 'owner' }] }); // a replace is no new member
  assert.equal((await orgUsers(org.id, q(1))).json.total_size, 2);
  assert.equal((await api('DELETE', `/api/v1/users/${a.id}`)).status, 204);
  assert.equal((await orgUsers(org.id, q(1))).json.total_size, 1);
  assert.equal((await envUsers(q(1))).json.total_size, base + 1);
  assert.equal((await api('DELETE', `/api/v1/organizations/${org.id}/users/${b.id}`)).status, 204);
  assert.equal((await orgUsers(org.id, q(1))).json.total_size, 0);
  assert.equal((await api('DELETE', `/api/v1/users/${b.id}`)).status, 204);
  assert.equal((await envUsers(q(1))).json.total_size, base);
});

test('listings: every bad input of contract §8', async () => {
  const org = big.id;
  for (const size of ['0', '101', '-1', 'abc', '', '1.5', '1e2', '+5', ' 5', '99999999999']) {
    const query = `?page_size=${encodeURIComponent(size)}`;
    assertProblem(assert, await orgUsers(org, query), 400, 'invalid_argument');
    assertProblem(assert, await envUsers(query), 400, 'invalid_argument');
  }
  assertProblem(assert, await orgUsers(org, '?page_size=5&page_size=6'), 400, 'invalid_argument');
  for (const ok of ['1', '100']) assert.equal((await orgUsers(org, `?page_size=${ok}`)).status, 200);

  const orgToken = (await orgUsers(org, q(10))).json.next_page_token;
  const smallToken = (await orgUsers(small.id, q(2))).json.next_page_token;
  const envToken = (await envUsers(q(10))).json.next_page_token;
  assert.ok(orgToken && smallToken && envToken);
  // Tampered: every position of the token edited in turn, and cut short.
  const flip = (t, i) => t.slice(0, i) + (t[i] === 'A' ? 'B' : 'A') + t.slice(i + 1);
  for (const i of [0, 1, 5, Math.floor(orgToken.length / 2), orgToken.length - 1]) {
    assertProblem(assert, await orgUsers(org, q(10, flip(orgToken, i))), 400, 'invalid_argument');
  }
  assertProblem(assert, await orgUsers(org, q(10, orgToken.slice(0, -2))), 400, 'invalid_argument');
  assertProblem(assert, await orgUsers(org, q(10, 'not a token')), 400, 'invalid_argument');
  assertProblem(assert, await orgUsers(org, q(10, 'x'.repeat(5000))), 400, 'invalid_argument');
  // A token from another listing.
  assertProblem(assert, await orgUsers(org, q(10, smallToken)), 400, 'invalid_argument');
  assertProblem(assert, await orgUsers(org, q(10, envToken)), 400, 'invalid_argument');
  assertProblem(assert, await envUsers(q(10, orgToken)), 400, 'invalid_argument');
  const orgsToken = (await api('GET', '/api/v1/organizations?page_size=1')).json.next_page_token;
  assert.ok(orgsToken);
  assertProblem(assert, await envUsers(q(10, orgsToken)), 400, 'invalid_argument');
  // An empty token is the first page.
  const firstAgain = await orgUsers(org, '?page_size=10&page_token=');
  assert.equal(firstAgain.status, 200);
  assert.equal(firstAgain.json.prev_page_token, '');

  // Malformed organization ids: no prefix, 33 characters, punctuation → 400, never 404.
  for (const id of ['01jd3k6v2q8x4n7r9t0w5y1z3b', 'acme', `org_${'a'.repeat(29)}`, 'org_a.b', 'org_a!b', 'org_a%2Cb', 'org_', 'Org_abc']) {
    assert.ok(id.length !== 33 || id.startsWith('org_'));
    assertProblem(assert, await orgUsers(id), 400, 'invalid_argument');
  }
  // Unknown (well-formed) organization → 404.
  assertProblem(assert, await orgUsers(`org_${'0'.repeat(26)}`), 404, 'not_found');
  assertProblem(assert, await orgUsers('org_x'), 404, 'not_found');

  // No token → 401; a token without users:read → 403.
  for (const path of [`/api/v1/organizations/${org}/users`, '/api/v1/users']) {
    const r = await api('GET', path, { token: null });
    assertProblem(assert, r, 401, 'unauthenticated');
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    assertProblem(assert, await api('GET', path, { token: 'e30.e30.sig' }), 401, 'unauthenticated');
  }
  const noUsersRead = await tokenWithScopes(['organizations:read', 'users:write']);
  assertProblem(assert, await api('GET', `/api/v1/organizations/${org}/users`, { token: noUsersRead }), 403, 'permission_denied');
  assertProblem(assert, await api('GET', '/api/v1/users', { token: noUsersRead }), 403, 'permission_denied');
  const usersRead = await tokenWithScopes(['users:read']);
  assert.equal((await api('GET', `/api/v1/organizations/${org}/users`, { token: usersRead })).status, 200);
});

test('listings: concurrent writes keep total_size exact', async () => {
  const org = await createOrg();
  const users = [];
  for (let i = 0; i < 12; i++) users.push(await createUser());
  // The same membership put 8 times at once, 12 different ones at once, and a user created
  // with one address by 6 requests at once: one membership, 12 members, one user.
  const same = await Promise.all(Array.from({ length: 8 }, () =>
    api('PUT', `/api/v1/organizations/${org.id}/users/${users[0].id}`, { json: { roles: [{ name: 'x' }] } })));
  assert.equal(same.filter((r) => r.status === 201).length, 1, same.map((r) => r.status).join());
  assert.ok(same.every((r) => r.status === 201 || r.status === 200));
  await Promise.all(users.slice(1).map((u) => addMember(org.id, u.id)));
  const email = `race-${Date.now()}@example.com`;
  const before = (await envUsers(q(1))).json.total_size;
  const created = await Promise.all(Array.from({ length: 6 }, () => api('POST', '/api/v1/users', { json: { email } })));
  assert.equal(created.filter((r) => r.status === 201).length, 1);
  assert.equal(created.filter((r) => r.status === 409).length, 5);
  assert.equal((await envUsers(q(1))).json.total_size, before + 1);
  const listed = await orgUsers(org.id, q(100));
  assert.equal(listed.json.total_size, 12);
  assert.equal(listed.json.users.length, 12);
  // Removed concurrently, twice each: every membership goes once.
  const removed = await Promise.all([...users, ...users].map((u) => api('DELETE', `/api/v1/organizations/${org.id}/users/${u.id}`)));
  assert.equal(removed.filter((r) => r.status === 204).length, 12);
  assert.equal(removed.filter((r) => r.status === 404).length, 12);
  assert.equal((await orgUsers(org.id, q(1))).json.total_size, 0);
});
