// Environment users through the management API (contract §7, §8): create, read, change,
// delete; unique by e-mail (409); validation; scopes; what a delete takes with it. Every
// response is checked against docs/openapi.yaml.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { baseUrl, assertProblem, assertNoNulls, dbQuery } from './harness.mjs';
import { api, createOrg, createUser, addMember, eventsOf, tokenWithScopes, unique } from './management.mjs';

const USER_ID = /^usr_[0-9a-hjkmnp-tv-z]{26}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

test('users: create, read, update, delete', async () => {
  const email = `Ada.${unique()}@Example.COM`;
  const r = await api('POST', '/api/v1/users', {
    json: { email, given_name: 'Ada', family_name: 'Lovelace', external_id: `hr-${unique()}`, metadata: { dept: 'math' } },
  });
  assert.equal(r.status, 201, r.text);
  const user = r.json;
  assert.match(user.id, USER_ID);
  assert.equal(r.headers.get('location'), `${baseUrl}/api/v1/users/${user.id}`);
  // The domain is lower-cased, the local part kept.
  assert.equal(user.email, email.replace('Example.COM', 'example.com'));
  assert.equal(user.email_verified, false);
  assert.equal(user.active, true);
  assert.equal(user.given_name, 'Ada');
  assert.equal('display_name' in user, false);
  assert.deepEqual(user.metadata, { dept: 'math' });
  assert.deepEqual(user.memberships, []);
  assert.match(user.create_time, RFC3339);
  assertNoNulls(assert, user);

  const got = await api('GET', `/api/v1/users/${user.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.json, user);

  const patched = await api('PATCH', `/api/v1/users/${user.id}`, {
    json: { display_name: 'Ada L.', given_name: null, email_verified: true },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json.display_name, 'Ada L.');
  assert.equal('given_name' in patched.json, false);
  assert.equal(patched.json.family_name, 'Lovelace');
  assert.equal(patched.json.email_verified, true);
  assert.equal(patched.json.create_time, user.create_time);
  // A GET body sent back changes nothing.
  const same = await api('PATCH', `/api/v1/users/${user.id}`, { json: patched.json });
  assert.equal(same.status, 200, same.text);
  assert.deepEqual({ ...same.json, update_time: 0 }, { ...patched.json, update_time: 0 });

  assert.equal((await eventsOf('user.created', 'user_id', user.id)).length, 1);
  assert.ok((await eventsOf('user.updated', 'user_id', user.id)).length >= 1);
  assert.equal((await api('DELETE', `/api/v1/users/${user.id}`)).status, 204);
  assertProblem(assert, await api('GET', `/api/v1/users/${user.id}`), 404, 'not_found');
  assertProblem(assert, await api('DELETE', `/api/v1/users/${user.id}`), 404, 'not_found');
  assertProblem(assert, await api('PATCH', `/api/v1/users/${user.id}`, { json: {} }), 404, 'not_found');
  assert.equal((await eventsOf('user.deleted', 'user_id', user.id)).length, 1);
});

test('users: one user per e-mail address, case-insensitively (409)', async () => {
  const local = `dup.${unique()}`;
  const a = await createUser({ email: `${local}@example.com` });
  assertProblem(assert, await api('POST', '/api/v1/users', { json: { email: `${local.toUpperCase()}@EXAMPLE.com` } }), 409, 'already_exists');
  const b = await createUser();
  assertProblem(assert, await api('PATCH', `/api/v1/users/${b.id}`, { json: { email: `${local}@example.com` } }), 409, 'already_exists');
  assert.equal((await api('DELETE', `/api/v1/users/${a.id}`)).status, 204);
  const moved = await api('PATCH', `/api/v1/users/${b.id}`, { json: { email: `${local}@example.com` } });
  assert.equal(moved.status, 200, moved.text);
});

test('users: validation', async () => {
  const bad = [
    {},
    { email: '' },
    { email: 'not-an-address' },
    { email: 'two@@example.com' },
    { email: 42 },
    { email: `${'x'.repeat(250)}@example.com` },
    { email: `v${unique()}@example.com`, given_name: 7 },
    { email: `v${unique()}@example.com`, given_name: 'x'.repeat(201) },
    { email: `v${unique()}@example.com`, display_name: 'tab\there' },
    { email: `v${unique()}@example.com`, external_id: '' },
    { email: `v${unique()}@example.com`, active: 'yes' },
    { email: `v${unique()}@example.com`, email_verified: 1 },
    { email: `v${unique()}@example.com`, metadata: 'x' },
    { email: `v${unique()}@example.com`, metadata: { a: [null] } },
    { email: `v${unique()}@example.com`, role: 'admin' },
  ];
  for (const json of bad) {
    assertProblem(assert, await api('POST', '/api/v1/users', { json }), 400, 'invalid_argument');
  }
  const user = await createUser();
  assertProblem(assert, await api('PATCH', `/api/v1/users/${user.id}`, { json: { email: null } }), 400, 'invalid_argument');
  assertProblem(assert, await api('PATCH', `/api/v1/users/${user.id}`, { body: '[]', headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
  for (const id of ['nobody', 'usr_', `usr_${'0'.repeat(26)}`, 'org_00000000000000000000000000']) {
    assertProblem(assert, await api('GET', `/api/v1/users/${id}`), 404, 'not_found');
  }
});

test('users: scopes and authentication', async () => {
  const user = await createUser();
  const reader = await tokenWithScopes(['users:read']);
  const orgsOnly = await tokenWithScopes(['organizations:read', 'organizations:write']);
  assert.equal((await api('GET', `/api/v1/users/${user.id}`, { token: reader })).status, 200);
  assertProblem(assert, await api('POST', '/api/v1/users', { token: reader, json: { email: `s${unique()}@example.com` } }), 403, 'permission_denied');
  assertProblem(assert, await api('PATCH', `/api/v1/users/${user.id}`, { token: reader, json: {} }), 403, 'permission_denied');
  assertProblem(assert, await api('DELETE', `/api/v1/users/${user.id}`, { token: reader }), 403, 'permission_denied');
  assertProblem(assert, await api('GET', `/api/v1/users/${user.id}`, { token: orgsOnly }), 403, 'permission_denied');
  assertProblem(assert, await api('GET', '/api/v1/users', { token: orgsOnly }), 403, 'permission_denied');
  for (const token of [null, 'garbage']) {
    const r = await api('GET', `/api/v1/users/${user.id}`, { token });
    assertProblem(assert, r, 401, 'unauthenticated');
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
  }
});

test('users: deleting a user removes their memberships and sessions and revokes their grants', async () => {
  const org = await createOrg();
  const user = await createUser();
  await addMember(org.id, user.id);
  const before = await api('GET', `/api/v1/organizations/${org.id}/users`);
  assert.equal(before.json.total_size, 1);
  assert.equal((await api('DELETE', `/api/v1/users/${user.id}`)).status, 204);
  const after = await api('GET', `/api/v1/organizations/${org.id}/users`);
  assert.equal(after.status, 200);
  assert.deepEqual(after.json.users, []);
  assert.equal(after.json.total_size, 0);
  for (const table of ['memberships', 'browser_sessions', 'consents']) {
    assert.deepEqual(dbQuery(`SELECT COUNT(*) FROM ${table} WHERE user_id = '${user.id}'`), [['0']], table);
  }
  // Grants are revoked, not deleted: their rows carry the revocation to every validator's
  // deny-list until the last access token they cover has expired (revocation.test.mjs).
  assert.deepEqual(dbQuery(`SELECT COUNT(*) FROM grants WHERE user_id = '${user.id}' AND revoked_at IS NULL`), [['0']]);
});

test('users: deactivating keeps the user listed and ends their sessions', async () => {
  const org = await createOrg();
  const user = await createUser();
  await addMember(org.id, user.id);
  const r = await api('PATCH', `/api/v1/users/${user.id}`, { json: { active: false } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.active, false);
  const listed = await api('GET', `/api/v1/organizations/${org.id}/users`);
  assert.deepEqual(listed.json.users.map((u) => [u.id, u.active]), [[user.id, false]]);
  assert.equal((await eventsOf('user.deactivated', 'user_id', user.id)).length, 1);
  const back = await api('PATCH', `/api/v1/users/${user.id}`, { json: { active: null } });
  assert.equal(back.json.active, true);
});
