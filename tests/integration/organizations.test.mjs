// Organizations and memberships through the management API (contract §7): create, read,
// list, change and delete, validation, 409 on a duplicate external_id, scopes, events. Every
// response is checked against docs/openapi.yaml.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { baseUrl, assertProblem, assertNoNulls } from './harness.mjs';
import { api, createOrg, createUser, addMember, eventsOf, tokenWithScopes, unique } from './management.mjs';

const ORG_ID = /^org_[0-9a-hjkmnp-tv-z]{26}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const events = (type, orgId) => eventsOf(type, 'organization_id', orgId);

test('organizations: create, read, update, delete', async () => {
  const external = `ext-${unique()}`;
  const r = await api('POST', '/api/v1/organizations', {
    json: { display_name: 'Acme Corp', external_id: external, metadata: { plan: 'enterprise', seats: 40 } },
  });
  assert.equal(r.status, 201, r.text);
  const org = r.json;
  assert.match(org.id, ORG_ID);
  assert.equal(r.headers.get('location'), `${baseUrl}/api/v1/organizations/${org.id}`);
  assert.equal(org.display_name, 'Acme Corp');
  assert.equal(org.external_id, external);
  assert.deepEqual(org.metadata, { plan: 'enterprise', seats: 40 });
  assert.match(org.create_time, RFC3339);
  assert.equal(org.update_time, org.create_time);
  assertNoNulls(assert, org);

  const got = await api('GET', `/api/v1/organizations/${org.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.json, org);

  const patched = await api('PATCH', `/api/v1/organizations/${org.id}`, {
    json: { display_name: 'Acme Inc', metadata: { plan: 'team' } },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json.display_name, 'Acme Inc');
  assert.equal(patched.json.external_id, external);
  assert.deepEqual(patched.json.metadata, { plan: 'team' });
  // The GET body can be sent back; null clears external_id and resets metadata.
  const cleared = await api('PATCH', `/api/v1/organizations/${org.id}`, {
    json: { ...patched.json, external_id: null, metadata: null },
  });
  assert.equal(cleared.status, 200, cleared.text);
  assert.equal('external_id' in cleared.json, false);
  // RFC 7396's own media type is accepted too.
  const merged = await api('PATCH', `/api/v1/organizations/${org.id}`, {
    body: JSON.stringify({ metadata: { tier: 2 } }),
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  assert.equal(merged.status, 200, merged.text);
  assert.deepEqual(merged.json.metadata, { tier: 2 });
  await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { metadata: null } });
  assert.deepEqual(cleared.json.metadata, {});
  assertNoNulls(assert, cleared.json);

  const created = await events('organization.created', org.id);
  assert.equal(created.length, 1);
  assert.equal(created[0].organization_id, org.id);
  assert.equal((await events('organization.updated', org.id)).length >= 1, true);

  const del = await api('DELETE', `/api/v1/organizations/${org.id}`);
  assert.equal(del.status, 204);
  assertProblem(assert, await api('GET', `/api/v1/organizations/${org.id}`), 404, 'not_found');
  assertProblem(assert, await api('DELETE', `/api/v1/organizations/${org.id}`), 404, 'not_found');
  assertProblem(assert, await api('PATCH', `/api/v1/organizations/${org.id}`, { json: {} }), 404, 'not_found');
  assert.equal((await events('organization.deleted', org.id)).length, 1);
});

test('organizations: a duplicate external_id is a 409, on create and on update', async () => {
  const external = `dup-${unique()}`;
  const a = await createOrg({ external_id: external });
  assertProblem(assert, await api('POST', '/api/v1/organizations', { json: { display_name: 'B', external_id: external } }), 409, 'already_exists');
  const b = await createOrg();
  assertProblem(assert, await api('PATCH', `/api/v1/organizations/${b.id}`, { json: { external_id: external } }), 409, 'already_exists');
  // Freed by a delete.
  assert.equal((await api('DELETE', `/api/v1/organizations/${a.id}`)).status, 204);
  const moved = await api('PATCH', `/api/v1/organizations/${b.id}`, { json: { external_id: external } });
  assert.equal(moved.status, 200, moved.text);
});

test('organizations: validation', async () => {
  const bad = [
    {},
    { display_name: '' },
    { display_name: '   ' },
    { display_name: 42 },
    { display_name: 'x'.repeat(201) },
    { display_name: 'line\nbreak' },
    { display_name: 'A', external_id: '' },
    { display_name: 'A', external_id: 7 },
    { display_name: 'A', external_id: 'x'.repeat(256) },
    { display_name: 'A', metadata: [] },
    { display_name: 'A', metadata: 'text' },
    { display_name: 'A', metadata: { a: null } },
    { display_name: 'A', metadata: { big: 'x'.repeat(17000) } },
    { display_name: 'A', unknown: 1 },
  ];
  for (const json of bad) {
    assertProblem(assert, await api('POST', '/api/v1/organizations', { json }), 400, 'invalid_argument');
  }
  for (const body of ['', 'not json', '[]', '{"display_name":"A",}']) {
    assertProblem(assert, await api('POST', '/api/v1/organizations', { body, headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
  }
  // Malformed organization ids are a 400, never a 404 (contract §0).
  for (const id of ['acme', 'org_', `org_${'a'.repeat(29)}`, 'org_a.b', 'org_a%20b', 'ORG_abc']) {
    assertProblem(assert, await api('GET', `/api/v1/organizations/${id}`), 400, 'invalid_argument');
    assertProblem(assert, await api('PATCH', `/api/v1/organizations/${id}`, { json: {} }), 400, 'invalid_argument');
    assertProblem(assert, await api('DELETE', `/api/v1/organizations/${id}`), 400, 'invalid_argument');
  }
  // Well-formed but unknown: 404 (a caller-chosen id of 28 characters is well-formed).
  assertProblem(assert, await api('GET', `/api/v1/organizations/org_${'a'.repeat(28)}`), 404, 'not_found');
  const org = await createOrg();
  assertProblem(assert, await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { display_name: null } }), 400, 'invalid_argument');
  assertProblem(assert, await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { id: 'org_x', nope: true } }), 400, 'invalid_argument');
});

test('organizations: listing pages oldest first with total_size', async () => {
  const mine = [];
  for (let i = 0; i < 5; i++) mine.push((await createOrg()).id);
  const seen = [];
  let token = '';
  let pages = 0;
  let total;
  do {
    const r = await api('GET', `/api/v1/organizations?page_size=2&page_token=${encodeURIComponent(token)}`);
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.organizations.length <= 2);
    total ??= r.json.total_size;
    seen.push(...r.json.organizations.map((o) => o.id));
    token = r.json.next_page_token;
    pages++;
  } while (token && pages < 1000);
  const positions = mine.map((id) => seen.indexOf(id));
  assert.ok(positions.every((p) => p >= 0), 'every organization created is listed');
  assert.deepEqual([...positions].sort((a, b) => a - b), positions, 'oldest first');
  assert.ok(total >= 5);
  assertProblem(assert, await api('GET', '/api/v1/organizations?page_size=0'), 400, 'invalid_argument');
  assertProblem(assert, await api('GET', '/api/v1/organizations?page_token=bogus'), 400, 'invalid_argument');
});

test('organizations: scopes and authentication', async () => {
  const org = await createOrg();
  const reader = await tokenWithScopes(['organizations:read']);
  const usersOnly = await tokenWithScopes(['users:read', 'users:write']);
  assert.equal((await api('GET', `/api/v1/organizations/${org.id}`, { token: reader })).status, 200);
  assert.equal((await api('GET', '/api/v1/organizations', { token: reader })).status, 200);
  assertProblem(assert, await api('POST', '/api/v1/organizations', { token: reader, json: { display_name: 'X' } }), 403, 'permission_denied');
  assertProblem(assert, await api('PATCH', `/api/v1/organizations/${org.id}`, { token: reader, json: {} }), 403, 'permission_denied');
  assertProblem(assert, await api('DELETE', `/api/v1/organizations/${org.id}`, { token: reader }), 403, 'permission_denied');
  assertProblem(assert, await api('GET', `/api/v1/organizations/${org.id}`, { token: usersOnly }), 403, 'permission_denied');
  for (const token of [null, 'not-a-jwt']) {
    const r = await api('GET', '/api/v1/organizations', { token });
    assertProblem(assert, r, 401, 'unauthenticated');
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
  }
});

// --------------------------------------------------------------------------- memberships

test('memberships: add, replace, remove; the user shows them', async () => {
  const org = await createOrg();
  const user = await createUser();
  const put = await api('PUT', `/api/v1/organizations/${org.id}/users/${user.id}`, {
    json: { roles: [{ name: 'admin' }, { name: 'billing' }], metadata: { team: 'core' } },
  });
  assert.equal(put.status, 201, put.text);
  assert.equal(put.json.organization_id, org.id);
  assert.equal(put.json.user_id, user.id);
  assert.deepEqual(put.json.roles, [{ name: 'admin' }, { name: 'billing' }]);
  assert.deepEqual(put.json.metadata, { team: 'core' });
  assert.equal(put.json.status, 'active');
  assert.equal(put.json.provisioned_by, 'api');
  assert.match(put.json.join_time, RFC3339);

  const again = await api('PUT', `/api/v1/organizations/${org.id}/users/${user.id}`, {
    json: { roles: [{ name: 'member' }], status: 'inactive' },
  });
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(again.json.roles, [{ name: 'member' }]);
  assert.deepEqual(again.json.metadata, {});
  assert.equal(again.json.status, 'inactive');
  assert.equal(again.json.join_time, put.json.join_time);

  const got = await api('GET', `/api/v1/users/${user.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.json.memberships, [{
    organization_id: org.id, roles: [{ name: 'member' }], status: 'inactive',
    join_time: put.json.join_time, metadata: {}, provisioned_by: 'api',
  }]);
  assert.equal((await events('organization.membership.created', org.id)).length, 1);
  assert.equal((await events('organization.membership.updated', org.id)).length, 1);

  assert.equal((await api('DELETE', `/api/v1/organizations/${org.id}/users/${user.id}`)).status, 204);
  assertProblem(assert, await api('DELETE', `/api/v1/organizations/${org.id}/users/${user.id}`), 404, 'not_found');
  assert.deepEqual((await api('GET', `/api/v1/users/${user.id}`)).json.memberships, []);
  assert.equal((await events('organization.membership.deleted', org.id)).length, 1);
});

test('memberships: validation, unknown organization or user, scopes', async () => {
  const org = await createOrg();
  const user = await createUser();
  const path = `/api/v1/organizations/${org.id}/users/${user.id}`;
  const bad = [
    { roles: 'admin' },
    { roles: ['admin'] },
    { roles: [{ name: '' }] },
    { roles: [{ name: 'has space' }] },
    { roles: [{ name: 'x'.repeat(65) }] },
    { roles: [{ name: 'a' }, { name: 'a' }] },
    { roles: [{ name: 'a', extra: 1 }] },
    { roles: Array.from({ length: 51 }, (_, i) => ({ name: `r${i}` })) },
    { status: 'gone' },
    { status: 1 },
    { metadata: null },
    { metadata: [1] },
    { other: true },
  ];
  for (const json of bad) {
    assertProblem(assert, await api('PUT', path, { json }), 400, 'invalid_argument');
  }
  assertProblem(assert, await api('PUT', path, { body: 'nope', headers: { 'content-type': 'application/json' } }), 400, 'invalid_argument');
  assertProblem(assert, await api('PUT', `/api/v1/organizations/org_${'z'.repeat(26)}/users/${user.id}`, { json: {} }), 404, 'not_found');
  assertProblem(assert, await api('PUT', `/api/v1/organizations/${org.id}/users/usr_${'0'.repeat(26)}`, { json: {} }), 404, 'not_found');
  assertProblem(assert, await api('PUT', `/api/v1/organizations/${org.id}/users/nobody`, { json: {} }), 404, 'not_found');
  assertProblem(assert, await api('PUT', `/api/v1/organizations/bad.id/users/${user.id}`, { json: {} }), 400, 'invalid_argument');
  assertProblem(assert, await api('DELETE', `/api/v1/organizations/bad.id/users/${user.id}`), 400, 'invalid_argument');
  // Defaults: no roles, {}, active.
  const created = await api('PUT', path, { json: {} });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual([created.json.roles, created.json.metadata, created.json.status], [[], {}, 'active']);

  const usersOnly = await tokenWithScopes(['users:read', 'users:write', 'organizations:read']);
  assertProblem(assert, await api('PUT', path, { token: usersOnly, json: {} }), 403, 'permission_denied');
  assertProblem(assert, await api('DELETE', path, { token: usersOnly }), 403, 'permission_denied');
  assertProblem(assert, await api('PUT', path, { token: null, json: {} }), 401, 'unauthenticated');
});

test('memberships: deleting the organization removes them; the users stay', async () => {
  const org = await createOrg();
  const other = await createOrg();
  const user = await createUser();
  await addMember(org.id, user.id);
  await addMember(other.id, user.id);
  assert.equal((await api('DELETE', `/api/v1/organizations/${org.id}`)).status, 204);
  const got = await api('GET', `/api/v1/users/${user.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.json.memberships.map((m) => m.organization_id), [other.id]);
  assertProblem(assert, await api('GET', `/api/v1/organizations/${org.id}/users`), 404, 'not_found');
});
