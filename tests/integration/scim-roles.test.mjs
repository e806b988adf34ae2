// SCIM group → role mapping of a group too large for one request (docs/scim.md §6): the
// PATCH of scim_group_roles answers at once and the background process (portcullis-webhooks,
// scim::run_role_job) brings every member to the new mapping's roles, 500 per transaction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sleep } from './harness.mjs';
import { api, unique } from './management.mjs';
import { tenant, scim, patch, USER, GROUP } from './scim.mjs';

const MEMBERS = 6000;

// Every member's role names, through the listing API (all pages).
async function rolesByUser(orgId) {
  const roles = new Map();
  let token;
  do {
    const r = await api('GET', `/api/v1/organizations/${orgId}/users?page_size=100${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
    assert.equal(r.status, 200, r.text);
    for (const u of r.json.users) roles.set(u.id, u.memberships.find((m) => m.organization_id === orgId).roles.map((x) => x.name).sort());
    token = r.json.next_page_token;
  } while (token);
  return roles;
}

// Waits until `check(roles)` holds for every member (the background job), at most 3 minutes.
async function untilEveryMember(orgId, ids, expected) {
  let last;
  for (let i = 0; i < 180; i++) {
    const roles = await rolesByUser(orgId);
    last = ids.filter((id) => JSON.stringify(roles.get(id)) !== JSON.stringify(expected));
    if (last.length === 0) return;
    await sleep(1000);
  }
  assert.fail(`${last.length} of ${ids.length} members do not hold exactly ${expected}`);
}

test(`a mapping change for a group of ${MEMBERS} members reaches every member in the background`, async () => {
  const { org, token } = await tenant();
  const ids = [];
  const tag = unique();
  let next = 0;
  await Promise.all(Array.from({ length: 12 }, async () => {
    while (next < MEMBERS) {
      const i = next++;
      const r = await scim(token, 'POST', '/Users', { json: { schemas: [USER], userName: `r${i}-${tag}` }, check: i % 500 === 0 });
      assert.equal(r.status, 201, r.text);
      ids.push(r.json.id);
    }
  }));
  assert.equal(ids.length, MEMBERS);
  const name = `Everyone ${tag}`;
  const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: name } });
  assert.equal(g.status, 201, g.text);
  const added = await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: ids.map((value) => ({ value })) }) });
  assert.equal(added.status, 204, added.text);
  // One member the organization gave a role of its own, which no mapping names: it stays.
  const own = await api('PUT', `/api/v1/organizations/${org.id}/users/${ids[0]}`, { json: { roles: [{ name: 'billing' }], metadata: {} } });
  assert.equal(own.status, 200, own.text);

  // More than 5,000 members: accepted (no longer refused), done in the background.
  const mapped = await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { scim_group_roles: { [name]: 'admin' } } });
  assert.equal(mapped.status, 200, mapped.text);
  await untilEveryMember(org.id, ids.slice(1), ['admin']);
  assert.deepEqual((await rolesByUser(org.id)).get(ids[0]), ['admin', 'billing']);

  // Another role for the same group: the old one is taken from every member.
  const moved = await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { scim_group_roles: { [name.toLowerCase()]: 'operator' } } });
  assert.equal(moved.status, 200, moved.text);
  await untilEveryMember(org.id, ids.slice(1), ['operator']);
  assert.deepEqual((await rolesByUser(org.id)).get(ids[0]), ['billing', 'operator']);
  // A member who joins the group while nothing is queued gets the role in their own request.
  const late = await scim(token, 'POST', '/Users', { json: { schemas: [USER], userName: `late-${tag}` } });
  assert.equal((await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: [{ value: late.json.id }] }) })).status, 204);
  assert.deepEqual((await rolesByUser(org.id)).get(late.json.id), ['operator']);
});
