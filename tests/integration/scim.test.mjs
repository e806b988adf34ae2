// SCIM 2.0 provisioning (contract §7 directories, §9): every check of the research notes'
// acceptance list (tenancy, discovery, the Entra ID and Okta request sequences replayed request
// by request, filters, paging, projection, PATCH, ETags, input hygiene), deactivation seen at
// the demo MCP server, hostile bodies. Every response is validated by scimmy and every filter
// sent is parsed by scim2-parse-filter too (scim.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { env, baseUrl, http, sleep, assertNoNulls, dbQuery } from './harness.mjs';
import { api, eventsOf, tokenWithScopes, unique } from './management.mjs';
import {
  tenant, scim, filterQuery, assertFilterRejectedByOracle, patch,
  USER, GROUP, ENTERPRISE, ERROR, LIST,
} from './scim.mjs';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const TOKEN = /^scim_[A-Za-z0-9_-]{43}$/;

function userBody(userName, extra = {}) {
  return {
    schemas: [USER],
    userName,
    name: { givenName: 'Barbara', familyName: 'Jensen' },
    emails: [{ value: `${unique()}@example.net`, type: 'work', primary: true }],
    active: true,
    ...extra,
  };
}

async function createUser(token, userName = `u-${unique()}@example.net`, extra = {}) {
  const r = await scim(token, 'POST', '/Users', { json: userBody(userName, extra) });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

test('directories: create shows the token once, rotation keeps two live, delete revokes', async () => {
  const { org, directory, token } = await tenant();
  assert.match(directory.id, /^dir_[0-9a-z]{26}$/);
  assert.equal(directory.organization_id, org.id);
  assert.equal(directory.name, 'Entra ID');
  assert.match(token, TOKEN);
  assert.match(directory.create_time, RFC3339);
  assertNoNulls(assert, directory);
  const base = `/api/v1/organizations/${org.id}/directories`;

  // Unused so far; a SCIM request marks it used.
  let listed = await api('GET', base);
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.json.directories.length, 1);
  assert.equal(listed.json.directories[0].last_used_time, undefined);
  assert.equal(listed.json.directories[0].token, undefined, 'the token is never shown again');
  assert.equal((await scim(token, 'GET', '/Users')).status, 200);
  listed = await api('GET', base);
  assert.match(listed.json.directories[0].last_used_time, RFC3339);

  // The token is stored as a hash only.
  const { dbQuery } = await import('./harness.mjs');
  const stored = dbQuery(`SELECT HEX(token_hash) FROM scim_directory_tokens WHERE directory_id = '${directory.id}'`);
  assert.equal(stored.length, 1);
  assert.equal(stored[0][0].length, 64);
  assert.ok(!JSON.stringify(dbQuery('SELECT * FROM scim_directory_tokens')).includes(token.slice(5)));

  const second = await api('POST', `${base}/${directory.id}/tokens`);
  assert.equal(second.status, 201, second.text);
  assert.match(second.json.token, TOKEN);
  assert.equal((await scim(token, 'GET', '/Users')).status, 200, 'both tokens live');
  assert.equal((await scim(second.json.token, 'GET', '/Users')).status, 200);
  const third = await api('POST', `${base}/${directory.id}/tokens`);
  assert.equal(third.status, 201);
  assert.equal((await scim(token, 'GET', '/Users')).status, 401, 'the oldest of three is revoked');
  assert.equal((await scim(second.json.token, 'GET', '/Users')).status, 200);
  assert.equal((await scim(third.json.token, 'GET', '/Users')).status, 200);
  assert.equal((await api('GET', `${base}/${directory.id}`)).json.live_tokens, 2);

  // Scope directories:write.
  const weak = await tokenWithScopes(['organizations:write', 'organizations:read']);
  assert.equal((await api('POST', base, { token: weak, json: {} })).status, 403);
  assert.equal((await api('GET', base, { token: weak })).status, 403);
  assert.equal((await api('POST', `/api/v1/organizations/org_nothere/directories`, { json: {} })).status, 404);

  assert.equal((await api('DELETE', `${base}/${directory.id}`)).status, 204);
  assert.equal((await scim(third.json.token, 'GET', '/Users')).status, 401);
  assert.equal((await api('GET', `${base}/${directory.id}`)).status, 404);
  for (const type of ['directory.created', 'directory.token.rotated', 'directory.deleted']) {
    const ev = await eventsOf(type, 'organization_id', org.id);
    assert.ok(ev.length >= 1, type);
    assert.equal(ev[0].data.directory_id, directory.id);
  }
});

test('§4.1-2 auth: no token, garbage, Basic, revoked: the same 401 in the SCIM shape', async () => {
  const { org, directory, token } = await tenant();
  const rotated = await api('POST', `/api/v1/organizations/${org.id}/directories/${directory.id}/tokens`);
  await api('POST', `/api/v1/organizations/${org.id}/directories/${directory.id}/tokens`);
  assert.equal(rotated.status, 201);
  const bodies = new Set();
  for (const authorization of [undefined, 'Bearer garbage', 'Basic dXNlcjpwYXNz', `Bearer ${token}`, `Bearer scim_${'A'.repeat(43)}`]) {
    const r = await scim(null, 'GET', '/Users', { headers: authorization ? { authorization } : {} });
    assert.equal(r.status, 401, authorization);
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    bodies.add(r.text);
  }
  assert.equal(bodies.size, 1, 'a revoked token cannot be told from an unknown one');
});

test('§4.3-6 tenant isolation between two organizations', async () => {
  const a = await tenant();
  const b = await tenant();
  const uA = await createUser(a.token);
  const before = (await scim(a.token, 'GET', `/Users/${uA.id}`)).json;
  for (const [method, json] of [['GET'], ['PUT', userBody('x@example.net')], ['PATCH', patch({ op: 'replace', path: 'active', value: false })], ['DELETE']]) {
    const r = await scim(b.token, method, `/Users/${uA.id}`, { json });
    assert.equal(r.status, 404, `${method} ${r.text}`);
    assert.ok(r.json.detail);
  }
  assert.deepEqual((await scim(a.token, 'GET', `/Users/${uA.id}`)).json, before, 'uA unchanged');
  const filtered = await scim(b.token, 'GET', `/Users${filterQuery(`userName eq "${uA.userName}"`)}`);
  assert.equal(filtered.json.totalResults, 0);
  const all = await scim(b.token, 'GET', '/Users');
  assert.ok(!all.json.Resources.some((u) => u.id === uA.id));
  // Per-organization uniqueness: B may use A's userName.
  const uB = await createUser(b.token, uA.userName);
  assert.notEqual(uB.id, uA.id);
  // B's group cannot take A's user (or a made-up id) as a member.
  const g = await scim(b.token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `B ${unique()}` } });
  assert.equal(g.status, 201);
  for (const value of [uA.id, 'usr_01hzzzzzzzzzzzzzzzzzzzzzzz']) {
    const r = await scim(b.token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: [{ value }] }) });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.scimType, 'invalidValue');
  }
  assert.deepEqual((await scim(b.token, 'GET', `/Groups/${g.json.id}`)).json.members, []);
  // The group is invisible to A.
  assert.equal((await scim(a.token, 'GET', `/Groups/${g.json.id}`)).status, 404);
});

test('§4.7 discovery: ServiceProviderConfig, ResourceTypes, Schemas; a filter there is 403', async () => {
  const { token } = await tenant();
  const spc = await scim(token, 'GET', '/ServiceProviderConfig');
  assert.equal(spc.status, 200);
  assert.equal(spc.json.patch.supported, true);
  assert.equal(spc.json.bulk.supported, false);
  assert.ok(Number.isInteger(spc.json.filter.maxResults));
  const { default: SCIMMY } = await import('scimmy');
  SCIMMY.Schemas.ServiceProviderConfig.definition.coerce(structuredClone(spc.json), 'out');
  const types = await scim(token, 'GET', '/ResourceTypes');
  assert.deepEqual(types.json.Resources.map((t) => t.id), ['User', 'Group']);
  assert.equal(types.json.Resources[0].schemaExtensions[0].schema, ENTERPRISE);
  assert.equal((await scim(token, 'GET', '/ResourceTypes/User')).json.endpoint, '/Users');
  const schemas = await scim(token, 'GET', '/Schemas');
  assert.deepEqual(schemas.json.Resources.map((s) => s.id), [USER, ENTERPRISE, GROUP]);
  const user = await scim(token, 'GET', `/Schemas/${USER}`);
  const userName = user.json.attributes.find((a) => a.name === 'userName');
  assert.equal(userName.caseExact, false);
  assert.equal(userName.uniqueness, 'server');
  assert.equal(userName.required, true);
  assert.equal((await scim(token, 'GET', '/Schemas/urn:nothing')).status, 404);
  for (const path of ['/ServiceProviderConfig', '/ResourceTypes', '/Schemas']) {
    const r = await scim(token, 'GET', `${path}?filter=x`);
    assert.equal(r.status, 403, path);
  }
  assert.equal((await scim(token, 'POST', '/Bulk', { json: {} })).status, 501);
});

test('§4.8-20 the Entra ID sequence, request by request', async () => {
  const { org, token } = await tenant();
  // 8. Test connection: plus-encoded filter with raw quotes.
  const probe = await http(`/scim/v2/Users?filter=userName+eq+"${randomUUID()}"`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(probe.status, 200, probe.text);
  assert.deepEqual(probe.json, { schemas: [LIST], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });

  // 9. The Entra-shaped create.
  const upn = `Test.User.${unique()}@Contoso.example`;
  const created = await scim(token, 'POST', '/Users', {
    json: {
      schemas: [USER, ENTERPRISE, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0User'],
      externalId: `ext-${unique()}`,
      userName: upn,
      active: true,
      addresses: null,
      displayName: 'Test User',
      emails: [{ primary: true, type: 'work', value: upn }],
      meta: { resourceType: 'User' },
      name: { formatted: 'Test User', familyName: 'User', givenName: 'Test' },
      roles: [],
      title: null,
      [ENTERPRISE]: { department: 'Sales', employeeNumber: null },
    },
  });
  assert.equal(created.status, 201, created.text);
  const u = created.json;
  assert.match(u.id, /^usr_[0-9a-z]{26}$/);
  assert.equal(created.headers.get('location'), u.meta.location);
  assert.equal(u.meta.location, `${baseUrl}/scim/v2/Users/${u.id}`);
  assert.equal(u.meta.created, u.meta.lastModified);
  assert.equal(u.userName, upn, 'case preserved');
  assert.equal(u.addresses, undefined);
  assert.equal(u.title, undefined);
  assert.equal(u.roles, undefined);
  assert.deepEqual(u[ENTERPRISE], { department: 'Sales' });
  assert.ok(u.schemas.includes(ENTERPRISE));
  assertNoNulls(assert, u);
  assert.equal(created.headers.get('etag'), u.meta.version);

  // 10. Case-insensitive userName, case-exact externalId.
  const other = await scim(token, 'GET', `/Users${filterQuery(`userName eq "${upn.toLowerCase()}"`)}`);
  assert.equal(other.json.totalResults, 1);
  assert.equal(other.json.Resources[0].id, u.id);
  const ext = await scim(token, 'GET', `/Users${filterQuery(`externalId eq "${u.externalId.toUpperCase()}"`)}`);
  assert.equal(ext.json.totalResults, 0);
  assert.equal((await scim(token, 'GET', `/Users${filterQuery(`externalId eq "${u.externalId}"`)}`)).json.totalResults, 1);

  // 11. Capitalised ops, value path.
  const p11 = await scim(token, 'PATCH', `/Users/${u.id}`, {
    json: patch(
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'n@x.example' },
      { op: 'Replace', path: 'name.familyName', value: 'F' },
    ),
  });
  assert.equal(p11.status, 200, p11.text);
  let got = (await scim(token, 'GET', `/Users/${u.id}`)).json;
  assert.equal(got.emails[0].value, 'n@x.example');
  assert.equal(got.name.familyName, 'F');
  assert.equal(got.name.givenName, 'Test');
  assert.notEqual(got.meta.version, u.meta.version);

  // 12. Disable with the string "False"; still listed; "True" restores.
  const p12 = await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'Replace', path: 'active', value: 'False' }) });
  assert.equal(p12.status, 200, p12.text);
  assert.equal((await scim(token, 'GET', `/Users/${u.id}`)).json.active, false);
  const still = await scim(token, 'GET', `/Users${filterQuery(`userName eq "${upn}"`)}`);
  assert.equal(still.json.Resources[0].active, false);
  const listing = await api('GET', `/api/v1/organizations/${org.id}/users`);
  const member = listing.json.users.find((x) => x.id === u.id);
  assert.equal(member.memberships[0].status, 'inactive');
  assert.equal(member.memberships[0].provisioned_by, 'scim');
  assert.equal((await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'Replace', path: 'active', value: 'True' }) })).json.active, true);
  assert.equal((await api('GET', `/api/v1/organizations/${org.id}/users`)).json.users.find((x) => x.id === u.id).memberships[0].status, 'active');

  // 13. Path-less replace whose keys are paths.
  const p13 = await scim(token, 'PATCH', `/Users/${u.id}`, {
    json: patch({ op: 'replace', value: { displayName: 'D', 'name.givenName': 'G', [`${ENTERPRISE}:employeeNumber`]: '42' } }),
  });
  assert.equal(p13.status, 200, p13.text);
  assert.equal(p13.json.displayName, 'D');
  assert.equal(p13.json.name.givenName, 'G');
  assert.equal(p13.json[ENTERPRISE].employeeNumber, '42');

  // 14. Manager as a bare string, then an object, then "" removes it.
  const mgr = await createUser(token);
  const mgr2 = await createUser(token);
  let p14 = await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'Add', path: `${ENTERPRISE}:manager`, value: mgr.id }) });
  assert.deepEqual(p14.json[ENTERPRISE].manager, { value: mgr.id });
  p14 = await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'Replace', path: `${ENTERPRISE}:manager`, value: { value: mgr2.id } }) });
  assert.deepEqual(p14.json[ENTERPRISE].manager, { value: mgr2.id });
  p14 = await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'Replace', path: `${ENTERPRISE}:manager`, value: '' }) });
  assert.equal(p14.json[ENTERPRISE].manager, undefined);

  // 15. Add on a value path with no match creates the element.
  const p15 = await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'Add', path: 'emails[type eq "home"].value', value: 'h@x.example' }) });
  assert.equal(p15.status, 200, p15.text);
  assert.deepEqual(p15.json.emails.find((e) => e.type === 'home'), { type: 'home', value: 'h@x.example' });

  // 16. Groups: created empty; a duplicate displayName in another case is 409.
  const name = `Sales ${unique()}`;
  const g = await scim(token, 'POST', '/Groups', {
    json: { schemas: [GROUP, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'], externalId: randomUUID(), displayName: name },
  });
  assert.equal(g.status, 201, g.text);
  assert.deepEqual(g.json.members, []);
  assert.equal(g.headers.get('location'), g.json.meta.location);
  const dup = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: name.toUpperCase() } });
  assert.equal(dup.status, 409);
  assert.equal(dup.json.scimType, 'uniqueness');

  // 17. Reads without members.
  const byName = await scim(token, 'GET', `/Groups${filterQuery(`displayName eq "${name}"`, '&excludedAttributes=members')}`);
  assert.equal(byName.json.totalResults, 1);
  assert.equal('members' in byName.json.Resources[0], false);
  const byId = await scim(token, 'GET', `/Groups/${g.json.id}?excludedAttributes=members`);
  assert.equal(byId.status, 200);
  assert.equal('members' in byId.json, false);

  // 18. Several members in one PATCH; repeating adds no duplicates.
  const u1 = await createUser(token);
  const u2 = await createUser(token);
  const add = patch({ op: 'Add', path: 'members', value: [{ $ref: null, value: u1.id }, { value: u2.id }] });
  assert.equal((await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: add })).status, 204);
  assert.equal((await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: add })).status, 204);
  let members = (await scim(token, 'GET', `/Groups/${g.json.id}`)).json.members;
  assert.deepEqual(members.map((m) => m.value).sort(), [u1.id, u2.id].sort());
  // Visible on the user and in the listing API's memberships.
  const u1Now = (await scim(token, 'GET', `/Users/${u1.id}`)).json;
  assert.deepEqual(u1Now.groups.map((x) => x.value), [g.json.id]);
  assert.equal((await scim(token, 'GET', `/Users${filterQuery(`groups.value eq "${g.json.id}"`)}`)).json.totalResults, 2);
  const listed = (await api('GET', `/api/v1/organizations/${org.id}/users`)).json.users.find((x) => x.id === u1.id);
  assert.deepEqual(listed.memberships[0].groups, [{ id: g.json.id, display_name: name }]);
  assert.deepEqual((await api('GET', `/api/v1/users/${u1.id}`)).json.memberships[0].groups, [{ id: g.json.id, display_name: name }]);
  const notInGroup = (await api('GET', `/api/v1/organizations/${org.id}/users`)).json.users.find((x) => x.id === u.id);
  assert.equal(notInGroup.memberships[0].groups, undefined);

  // 19. Removal by value list (Entra default) and by value filter (with the flag).
  assert.equal((await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'Remove', path: 'members', value: [{ value: u1.id }] }) })).status, 204);
  assert.equal((await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'remove', path: `members[value eq "${u2.id}"]` }) })).status, 204);
  members = (await scim(token, 'GET', `/Groups/${g.json.id}`)).json.members;
  assert.deepEqual(members, []);

  // 20. DELETE: 404 after, filter empty, again 404, gone from groups, userName free again.
  await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: [{ value: u1.id }] }) });
  assert.equal((await scim(token, 'DELETE', `/Users/${u1.id}`)).status, 204);
  assert.equal((await scim(token, 'GET', `/Users/${u1.id}`)).status, 404);
  assert.equal((await scim(token, 'GET', `/Users${filterQuery(`userName eq "${u1.userName}"`)}`)).json.totalResults, 0);
  assert.equal((await scim(token, 'DELETE', `/Users/${u1.id}`)).status, 404);
  assert.deepEqual((await scim(token, 'GET', `/Groups/${g.json.id}`)).json.members, []);
  const again = await createUser(token, u1.userName);
  assert.notEqual(again.id, u1.id);
  assert.ok(!(await api('GET', `/api/v1/organizations/${org.id}/users`)).json.users.some((x) => x.id === u1.id), 'membership removed');

  // Events with the directory, the organization and the user.
  const ev = await eventsOf('scim.user.created', 'user_id', u.id);
  assert.equal(ev[0].organization_id, org.id);
  assert.match(ev[0].data.directory_id, /^dir_/);
  assert.ok((await eventsOf('scim.user.deactivated', 'user_id', u.id)).length >= 1);
  assert.ok((await eventsOf('scim.user.updated', 'user_id', u.id)).length >= 1);
  assert.ok((await eventsOf('scim.user.deleted', 'user_id', u1.id)).length >= 1);
  assert.ok((await eventsOf('scim.group.created', 'organization_id', org.id)).length >= 1);
  assert.ok((await eventsOf('scim.group.updated', 'organization_id', org.id)).length >= 1);
});

test('§4.21-27 the Okta sequence, request by request', async () => {
  const { token } = await tenant();
  await createUser(token);
  // 21. Connection test.
  const first = await scim(token, 'GET', '/Users?startIndex=1&count=1');
  assert.equal(first.status, 200);
  assert.equal(first.json.itemsPerPage, 1);
  assert.equal(first.json.startIndex, 1);
  const r0 = first.json.Resources[0];
  for (const k of ['id', 'userName', 'active']) assert.ok(k in r0, k);
  assert.ok(r0.name.givenName && r0.name.familyName && r0.emails[0].value);

  // 22. Okta's create body.
  const userName = `Okta.${unique()}@Example.com`;
  const body = {
    schemas: [USER], userName, name: { givenName: 'Ann', familyName: 'Okta' },
    emails: [{ primary: true, value: userName, type: 'work' }], displayName: 'Ann Okta', locale: 'en-US',
    externalId: `00u${unique()}`, groups: [], password: 'Pa55word!', active: true,
  };
  const created = await scim(token, 'POST', '/Users', { json: body, headers: { 'content-type': 'application/json' } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.active, true);
  assert.equal(created.json.userName, userName);
  assert.equal(created.json.password, undefined);
  const read = await scim(token, 'GET', `/Users/${created.json.id}`);
  assert.deepEqual(read.json, created.json);

  // 23. Duplicates: same body, other case.
  for (const again of [body, { ...body, userName: userName.toUpperCase() }]) {
    const r = await scim(token, 'POST', '/Users', { json: again });
    assert.equal(r.status, 409, r.text);
    assert.equal(r.json.scimType, 'uniqueness');
    assert.equal(r.json.status, '409');
  }

  // 24. PUT the full object back with changes.
  const full = { ...read.json, name: { ...read.json.name, givenName: 'Anna' } };
  const put = await scim(token, 'PUT', `/Users/${created.json.id}`, { json: full });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.name.givenName, 'Anna');
  const off = await scim(token, 'PUT', `/Users/${created.json.id}`, { json: { ...full, active: false } });
  assert.equal(off.json.active, false);
  const otherUser = await createUser(token);
  const clash = await scim(token, 'PUT', `/Users/${created.json.id}`, { json: { ...full, userName: otherUser.userName.toLowerCase() } });
  assert.equal(clash.status, 409);
  assert.equal(clash.json.scimType, 'uniqueness');
  const { userName: _drop, ...noUserName } = full;
  const missing = await scim(token, 'PUT', `/Users/${created.json.id}`, { json: noUserName });
  assert.equal(missing.status, 400);
  assert.equal(missing.json.scimType, 'invalidValue');

  // 25. OIN-style deactivation.
  await scim(token, 'PUT', `/Users/${created.json.id}`, { json: { ...full, active: true } });
  const p25 = await scim(token, 'PATCH', `/Users/${created.json.id}`, { json: patch({ op: 'replace', value: { active: false } }) });
  assert.equal(p25.status, 200);
  assert.equal((await scim(token, 'GET', `/Users/${created.json.id}`)).json.active, false);

  // 26. Group push.
  const a = await createUser(token);
  const b = await createUser(token);
  const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `Push ${unique()}`, members: [{ value: a.id }] } });
  assert.equal(g.status, 201, g.text);
  const push = await scim(token, 'PATCH', `/Groups/${g.json.id}`, {
    json: patch(
      { op: 'remove', path: `members[value eq "${a.id}"]` },
      { op: 'add', path: 'members', value: [{ value: b.id, display: b.userName }] },
    ),
  });
  assert.ok([200, 204].includes(push.status), push.text);
  assert.deepEqual((await scim(token, 'GET', `/Groups/${g.json.id}`)).json.members.map((m) => m.value), [b.id]);
  const renamed = `Renamed ${unique()}`;
  const rename = await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'replace', value: { id: g.json.id, displayName: renamed } }) });
  assert.ok([200, 204].includes(rename.status), rename.text);
  assert.equal((await scim(token, 'GET', `/Groups/${g.json.id}`)).json.displayName, renamed);
  assert.equal((await scim(token, 'DELETE', `/Groups/${g.json.id}`)).status, 204);
  assert.equal((await scim(token, 'GET', `/Groups/${g.json.id}`)).status, 404);

  // 27.
  const nothing = await scim(token, 'GET', '/Users/does-not-exist');
  assert.equal(nothing.status, 404);
  assert.ok(nothing.json.detail.length > 0);
});

test('§4.28-31 filters: the grammar, LIKE escaping, multi-valued matches, limits', async () => {
  const { token } = await tenant();
  const tag = unique();
  const alice = await createUser(token, `alice-${tag}`, { title: 'Boss', emails: [{ type: 'work', value: `alice@${tag}.x.com` }] });
  const bob = await createUser(token, `bob-${tag}`, { emails: [{ type: 'home', value: `bob@${tag}.x.com` }, { type: 'work', value: `bob@${tag}.y.org` }] });
  const pct = await createUser(token, `100%_${tag}`);
  const plain = await createUser(token, `100xx${tag}`);
  await scim(token, 'PATCH', `/Users/${bob.id}`, { json: patch({ op: 'replace', path: 'active', value: false }) });
  const ids = async (filter) => {
    const r = await scim(token, 'GET', `/Users${filterQuery(filter, '&count=200')}`);
    assert.equal(r.status, 200, `${filter}: ${r.text}`);
    return r.json.Resources.map((u) => u.id).sort();
  };
  const sorted = (...us) => us.map((u) => u.id).sort();
  assert.deepEqual(await ids(`userName eq "alice-${tag}" and (title pr or emails[type eq "work" and value ew "@${tag}.x.com"])`), sorted(alice));
  assert.deepEqual(await ids(`userName eq "bob-${tag}" and (title pr or emails[type eq "work" and value ew "@${tag}.x.com"])`), []);
  assert.deepEqual(await ids(`USERNAME EQ "ALICE-${tag}"`), sorted(alice));
  assert.deepEqual(await ids(`not (active eq true) and userName ew "${tag}"`), sorted(bob));
  assert.deepEqual(await ids(`meta.lastModified gt "2020-01-01T00:00:00Z" and userName ew "${tag}"`), sorted(alice, bob, pct, plain));
  assert.deepEqual(await ids(`meta.created lt "2020-01-01T00:00:00Z"`), []);
  assert.deepEqual(await ids(`userName co "%_${tag}"`), sorted(pct));
  assert.deepEqual(await ids(`userName sw "100%"`), sorted(pct));
  assert.deepEqual(await ids(`userName sw "_"`), []);
  assert.deepEqual(await ids(`emails co "@${tag}.x.com"`), sorted(alice, bob));
  assert.deepEqual(await ids(`emails.value ew ".y.org" and userName ew "${tag}"`), sorted(bob));
  assert.deepEqual(await ids(`emails[type eq "work" and value co "${tag}.y"]`), sorted(bob));
  assert.deepEqual(await ids(`${USER}:userName eq "alice-${tag}" or userName eq "bob-${tag}"`), sorted(alice, bob));
  assert.deepEqual(await ids(`((userName eq "alice-${tag}"))`), sorted(alice));
  assert.deepEqual(await ids(`title eq "boss"`), sorted(alice), 'title is caseExact false');
  assert.deepEqual(await ids(`userName gt "bob-${tag}" and userName lt "bob-${tag}~"`), []);
  assert.deepEqual(await ids(`userName ge "bob-${tag}" and userName le "bob-${tag}"`), sorted(bob));
  assert.deepEqual(await ids(`userName ne "alice-${tag}" and userName ew "${tag}"`), sorted(bob, pct, plain));
  assert.deepEqual(await ids(`id eq "${alice.id}"`), sorted(alice));
  assert.deepEqual(await ids(`name.givenName eq "barbara" and userName sw "alice-${tag}"`), sorted(alice));
  assert.deepEqual(await ids(`emails[type eq "work"] and userName ew "${tag}"`), sorted(alice, bob, pct, plain));
  assert.deepEqual(await ids(`emails[type eq "home"] and userName ew "${tag}"`), sorted(bob));
  // A value that looks like SQL is only ever a value.
  assert.deepEqual(await ids(`userName eq "x' OR '1'='1"`), []);

  for (const bad of ['userName eq', 'userName xx "a"', '(userName eq "a"', 'userName eq bob', 'userName eq "a" and']) {
    assertFilterRejectedByOracle(bad);
    const r = await scim(token, 'GET', `/Users?filter=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, bad);
    assert.equal(r.json.scimType, 'invalidFilter', bad);
  }
  for (const bad of ['active gt true', 'fooBar eq "x"', 'name eq "x"', 'meta.created eq "yesterday"', 'password eq "x"']) {
    const r = await scim(token, 'GET', `/Users${filterQuery(bad)}`);
    assert.equal(r.status, 400, bad);
    assert.equal(r.json.scimType, 'invalidFilter', bad);
  }
  const long = `userName eq "${'a'.repeat(20000)}"`;
  const t0 = Date.now();
  const r1 = await scim(token, 'POST', '/Users/.search', {
    json: { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: long },
  });
  assert.equal(r1.status, 400);
  assert.equal(r1.json.scimType, 'invalidFilter');
  const deep = `${'('.repeat(12)}userName eq "a"${')'.repeat(12)}`;
  const r2 = await scim(token, 'GET', `/Users${filterQuery(deep)}`);
  assert.equal(r2.status, 400);
  assert.equal(r2.json.scimType, 'invalidFilter');
  const wide = Array.from({ length: 80 }, (_, i) => `userName eq "u${i}"`).join(' or ');
  const r3 = await scim(token, 'GET', `/Users${filterQuery(wide)}`);
  assert.equal(r3.status, 400);
  assert.equal(r3.json.scimType, 'tooMany');
  assert.ok(Date.now() - t0 < 3000, 'hostile filters are cheap');
  // Groups filter too.
  const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `F ${tag}`, members: [{ value: alice.id }] } });
  const gr = await scim(token, 'GET', `/Groups${filterQuery(`members[value eq "${alice.id}"]`)}`);
  assert.deepEqual(gr.json.Resources.map((x) => x.id), [g.json.id]);
  // POST .search answers like GET.
  const s = await scim(token, 'POST', '/Users/.search', {
    json: { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: `userName eq "alice-${tag}"`, attributes: ['userName'] },
  });
  assert.equal(s.status, 200, s.text);
  assert.deepEqual(Object.keys(s.json.Resources[0]).sort(), ['id', 'meta', 'schemas', 'userName']);
  // At the root: both resource types as one list.
  const root = await scim(token, 'POST', '/.search', {
    json: { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: 'meta.created gt "2020-01-01T00:00:00Z"', startIndex: 4, count: 10 },
  });
  assert.equal(root.status, 200, root.text);
  assert.equal(root.json.totalResults, 5);
  assert.deepEqual(root.json.Resources.map((x) => x.id), [plain.id, g.json.id]);
  // A filter only Groups know searches Groups.
  const groupsOnly = await scim(token, 'POST', '/.search', {
    json: { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: `members[value eq "${alice.id}"]` },
  });
  assert.deepEqual(groupsOnly.json.Resources.map((x) => x.id), [g.json.id]);
});

test('§4.32-34 paging, sorting and projection', async () => {
  const { token } = await tenant();
  const tag = unique();
  const made = [];
  for (let i = 0; i < 150; i += 10) {
    made.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => createUser(token, `p${String(i + j).padStart(3, '0')}-${tag}`)))));
  }
  const page1 = await scim(token, 'GET', '/Users?startIndex=1&count=100');
  const page2 = await scim(token, 'GET', '/Users?startIndex=101&count=100');
  assert.equal(page1.json.Resources.length, 100);
  assert.equal(page2.json.Resources.length, 50);
  assert.equal(page1.json.totalResults, 150);
  assert.equal(page2.json.totalResults, 150);
  assert.equal(page2.json.startIndex, 101);
  const seen = new Set([...page1.json.Resources, ...page2.json.Resources].map((u) => u.id));
  assert.equal(seen.size, 150);
  const again = await scim(token, 'GET', '/Users?startIndex=1&count=100');
  assert.deepEqual(again.json.Resources.map((u) => u.id), page1.json.Resources.map((u) => u.id));

  assert.equal((await scim(token, 'GET', '/Users?startIndex=0&count=1')).json.startIndex, 1);
  const none = await scim(token, 'GET', '/Users?count=-5');
  assert.equal(none.json.Resources.length, 0);
  assert.equal(none.json.totalResults, 150);
  const clamped = await scim(token, 'GET', '/Users?count=100000');
  assert.equal(clamped.json.itemsPerPage, clamped.json.Resources.length);
  assert.ok(clamped.json.Resources.length <= 200);
  const far = await scim(token, 'GET', '/Users?startIndex=9999');
  assert.equal(far.status, 200);
  assert.deepEqual(far.json.Resources, []);
  const abc = await scim(token, 'GET', '/Users?count=abc');
  assert.equal(abc.status, 400);
  assert.equal(abc.json.scimType, 'invalidValue');

  const proj = await scim(token, 'GET', '/Users?attributes=userName,emails&count=1');
  assert.deepEqual(Object.keys(proj.json.Resources[0]).sort(), ['emails', 'id', 'meta', 'schemas', 'userName']);
  const ex = await scim(token, 'GET', `/Users/${made[0].id}?excludedAttributes=emails,name`);
  assert.equal(ex.json.emails, undefined);
  assert.equal(ex.json.name, undefined);
  assert.equal(ex.json.userName, made[0].userName);
  const sub = await scim(token, 'GET', `/Users/${made[0].id}?attributes=name.givenName`);
  assert.deepEqual(sub.json.name, { givenName: 'Barbara' });

  const desc = await scim(token, 'GET', `/Users?sortBy=userName&sortOrder=descending&count=150`);
  const names = desc.json.Resources.map((u) => u.userName);
  assert.deepEqual(names, [...names].sort((x, y) => y.toLowerCase().localeCompare(x.toLowerCase())));
  assert.equal((await scim(token, 'GET', '/Users?sortBy=nothing')).status, 400);
});

test('§4.35-36 PATCH edge cases are atomic and precise', async () => {
  const { token } = await tenant();
  const u = await createUser(token);
  const cases = [
    [patch({ op: 'move', path: 'title', value: 'x' }), 'invalidSyntax'],
    [patch({ op: 'remove' }), 'noTarget'],
    [patch({ op: 'remove', path: 'userName' }), 'mutability'],
    [patch({ op: 'replace', path: 'fooBar', value: 1 }), 'invalidPath'],
    [patch({ op: 'replace', path: 'id', value: 'usr_other' }), 'mutability'],
    [patch({ op: 'replace', path: 'meta.created', value: '2020-01-01T00:00:00Z' }), 'mutability'],
    [patch({ op: 'replace', path: 'active', value: 'yes' }), 'invalidValue'],
    [patch({ op: 'replace', path: 'emails[bogus eq "x"].value', value: 'a' }), 'invalidFilter'],
    [{ Operations: [{ op: 'add', path: 'title', value: 'x' }] }, 'invalidSyntax'],
    [patch(), 'invalidSyntax'],
    [{ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: {} }, 'invalidSyntax'],
  ];
  for (const [body, scimType] of cases) {
    const r = await scim(token, 'PATCH', `/Users/${u.id}`, { json: body });
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.equal(r.json.scimType, scimType, JSON.stringify(body));
  }
  // Atomic: the first operation is not applied when the second fails.
  const r = await scim(token, 'PATCH', `/Users/${u.id}`, {
    json: patch({ op: 'replace', path: 'title', value: 'Applied?' }, { op: 'remove', path: 'userName' }),
  });
  assert.equal(r.status, 400);
  const now = (await scim(token, 'GET', `/Users/${u.id}`)).json;
  assert.equal(now.title, undefined);
  assert.equal(now.meta.version, u.meta.version);
  // Removing a member that is not there is a no-op; replace id with the same value too.
  const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `E ${unique()}` } });
  assert.equal((await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'remove', path: 'members[value eq "nobody"]' }) })).status, 204);
  assert.equal((await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'replace', path: 'id', value: u.id }) })).status, 200);
  // Removing primary email etc.: remove with a value filter.
  const withMails = await scim(token, 'PATCH', `/Users/${u.id}`, {
    json: patch({ op: 'add', path: 'emails', value: [{ type: 'home', value: 'h@x.example' }] }),
  });
  assert.equal(withMails.json.emails.length, 2);
  const removed = await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'remove', path: 'emails[type eq "home"]' }) });
  assert.equal(removed.json.emails.length, 1);
  // A new primary replaces the old one.
  const prim = await scim(token, 'PATCH', `/Users/${u.id}`, {
    json: patch({ op: 'add', path: 'emails', value: [{ type: 'other', value: 'o@x.example', primary: 'True' }] }),
  });
  assert.deepEqual(prim.json.emails.filter((e) => e.primary).map((e) => e.value), ['o@x.example']);
});

test('§4.37 ETags: If-Match and If-None-Match', async () => {
  const { token } = await tenant();
  const u = await createUser(token);
  const etag = u.meta.version;
  assert.match(etag, /^W\/"\d+"$/);
  const notModified = await scim(token, 'GET', `/Users/${u.id}`, { headers: { 'if-none-match': etag } });
  assert.equal(notModified.status, 304);
  const changed = await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'replace', path: 'title', value: 'T' }), headers: { 'if-match': etag } });
  assert.equal(changed.status, 200, changed.text);
  assert.notEqual(changed.headers.get('etag'), etag);
  const stale = await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'replace', path: 'title', value: 'U' }), headers: { 'if-match': etag } });
  assert.equal(stale.status, 412);
  const stalePut = await scim(token, 'PUT', `/Users/${u.id}`, { json: userBody(u.userName), headers: { 'if-match': etag } });
  assert.equal(stalePut.status, 412);
  assert.equal((await scim(token, 'DELETE', `/Users/${u.id}`, { headers: { 'if-match': etag } })).status, 412);
  assert.equal((await scim(token, 'GET', `/Users/${u.id}`)).json.title, 'T');
  const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `T ${unique()}` } });
  assert.equal((await scim(token, 'GET', `/Groups/${g.json.id}`, { headers: { 'if-none-match': g.json.meta.version } })).status, 304);
  const gstale = await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'replace', path: 'displayName', value: `N ${unique()}` }), headers: { 'if-match': 'W/"99"' } });
  assert.equal(gstale.status, 412);
});

test('§4.38-40 input hygiene, hostile bodies, ten parallel duplicate POSTs', async () => {
  const { token } = await tenant();
  const bodies = [
    ['{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":', 'application/scim+json'],
    ['[{"userName":"x"}]', 'application/scim+json'],
    [JSON.stringify(userBody('text@example.net')), 'text/plain'],
    [`${'['.repeat(10000)}${']'.repeat(10000)}`, 'application/scim+json'],
    [`{"a":${'{"a":'.repeat(200)}1${'}'.repeat(200)}}`, 'application/scim+json'],
  ];
  for (const [body, type] of bodies) {
    const r = await scim(token, 'POST', '/Users', { body, headers: { 'content-type': type } });
    assert.equal(r.status, 400, `${body.slice(0, 40)}: ${r.text}`);
  }
  // Invalid UTF-8.
  const bad = Buffer.concat([Buffer.from('{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
  const r8 = await scim(token, 'POST', '/Users', { body: bad, headers: { 'content-type': 'application/scim+json' } });
  assert.equal(r8.status, 400);

  const bogus = await scim(token, 'POST', '/Users', { json: { ...userBody(`b-${unique()}`), schemas: ['urn:bogus'] } });
  assert.equal(bogus.status, 400);
  assert.equal(bogus.json.scimType, 'invalidSyntax');
  const extra = await scim(token, 'POST', '/Users', { json: { ...userBody(`e-${unique()}`), schemas: [USER, 'urn:example:other'], fooBar: 1 } });
  assert.equal(extra.status, 201, extra.text);
  assert.equal(extra.json.fooBar, undefined);
  const yes = await scim(token, 'POST', '/Users', { json: { ...userBody(`y-${unique()}`), active: 'yes' } });
  assert.equal(yes.status, 400);
  assert.equal(yes.json.scimType, 'invalidValue');
  for (const userName of ['x'.repeat(257), 'tab\there', '']) {
    const r = await scim(token, 'POST', '/Users', { json: userBody(userName) });
    assert.equal(r.status, 400, JSON.stringify(userName));
    assert.equal(r.json.scimType, 'invalidValue');
  }
  // 2 MB body: nginx (or the worker) answers 413 in the SCIM shape.
  const big = await scim(token, 'POST', '/Users', { json: { ...userBody('big@example.net'), title: 'x'.repeat(2 * 1024 * 1024) } });
  assert.equal(big.status, 413);
  // A 100,000-member PATCH is over the body limit too.
  const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `Big ${unique()}` } });
  const members = Array.from({ length: 100000 }, (_, i) => ({ value: `usr_${String(i).padStart(26, '0')}` }));
  const huge = await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: members }) });
  assert.equal(huge.status, 413);
  // 1,000 unknown members within the limit: 400, nothing added.
  const some = await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: members.slice(0, 1000) }) });
  assert.equal(some.status, 400);
  assert.deepEqual((await scim(token, 'GET', `/Groups/${g.json.id}`)).json.members, []);

  // Ten identical POSTs at once: exactly one 201.
  const body = userBody(`race-${unique()}@example.net`);
  const results = await Promise.all(Array.from({ length: 10 }, () => scim(token, 'POST', '/Users', { json: body })));
  const statuses = results.map((r) => r.status).sort();
  assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409, 409, 409, 409, 409], results.map((r) => r.text).join('\n'));
  // Never a 5xx anywhere above (checked per response); unknown SCIM path is a SCIM 404.
  const unknown = await scim(token, 'GET', '/Nothing');
  assert.equal(unknown.status, 404);
});

test('linking: only through a verified domain of the organization', async () => {
  const { org, token } = await tenant();
  // An environment user with an address of an unverified domain stays someone else.
  const existing = (await api('POST', '/api/v1/users', { json: { email: `ada@${unique()}.example.com` } })).json;
  const made = await createUser(token, `ada-${unique()}`, { emails: [{ type: 'work', value: existing.email, primary: true }] });
  assert.notEqual(made.id, existing.id);
  const listing = await api('GET', `/api/v1/users/${made.id}`);
  assert.equal(listing.json.email, undefined, 'the new user does not get the taken address');
  // With the domain verified by the organization, the same address links.
  const domain = `${unique()}.example.com`;
  const owned = (await api('POST', '/api/v1/users', { json: { email: `grace@${domain}` } })).json;
  const claimed = await api('POST', `/api/v1/organizations/${org.id}/domains`, { json: { domain } });
  assert.equal(claimed.status, 201, claimed.text);
  const verified = await api('POST', `/api/v1/organizations/${org.id}/domains/${claimed.json.id}/verify`, { json: { method: 'admin' } });
  assert.equal(verified.status, 200, verified.text);
  const linked = await createUser(token, `grace-${unique()}`, { emails: [{ type: 'work', value: `grace@${domain}`, primary: true }] });
  assert.equal(linked.id, owned.id);
  // A new address gets a new environment user carrying it.
  const fresh = await createUser(token, `new-${unique()}@${unique()}.example.com`, { emails: [] });
  assert.equal((await api('GET', `/api/v1/users/${fresh.id}`)).json.email, fresh.userName.replace(/@.*/, (d) => d.toLowerCase()));
});

test('deactivation: the user\'s access token is refused at the demo MCP server', async () => {
  const mcpUrl = env.PORTCULLIS_DEMO_MCP_URL;
  const resourceId = env.PORTCULLIS_DEMO_RESOURCE_ID;
  const issuer = `${baseUrl}/resources/${resourceId}`;
  const { auth } = await import('@modelcontextprotocol/sdk/client/auth.js');
  const { ScriptedProvider } = await import('./sdk-client.mjs');
  const { token } = await tenant();
  const email = `deact-${unique()}@example.com`;
  const u = await createUser(token, email, { emails: [{ type: 'work', value: email, primary: true }] });
  const provider = new ScriptedProvider(email, { issuer: () => issuer, grantTypes: ['authorization_code'] });
  assert.equal(await auth(provider, { serverUrl: mcpUrl, scope: 'demo:read' }), 'REDIRECT');
  assert.equal(await auth(provider, { serverUrl: mcpUrl, scope: 'demo:read', authorizationCode: provider.code }), 'AUTHORIZED');
  const accessToken = provider.tokens().access_token;
  const refreshToken = provider.tokens().refresh_token;
  const rpc = (t) => fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${t}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
  });
  const ok = await rpc(accessToken);
  assert.equal(ok.status, 200);
  assert.equal(JSON.parse((await ok.json()).result.content[0].text).sub, u.id, 'the token is the SCIM user\'s');

  const off = await scim(token, 'PATCH', `/Users/${u.id}`, { json: patch({ op: 'Replace', path: 'active', value: 'False' }) });
  assert.equal(off.status, 200, off.text);
  let status;
  for (let i = 0; i < 30; i++) {
    status = (await rpc(accessToken)).status;
    if (status === 401) break;
    await sleep(200);
  }
  assert.equal(status, 401, 'refused within the deny-list sync');
  if (refreshToken) {
    const refreshed = await http('/oauth/token', {
      method: 'POST',
      form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: provider.clientInformation().client_id, resource: mcpUrl },
    });
    assert.equal(refreshed.status, 400, refreshed.text);
  }
});

test('scim_group_roles: group members get the mapped role as they join and lose it as they leave', async () => {
  const { org, token } = await tenant();
  const admins = `Admins ${unique()}`;
  const set = await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { scim_group_roles: { [admins]: 'admin' } } });
  assert.equal(set.status, 200, set.text);
  assert.deepEqual(set.json.scim_group_roles, { [admins]: 'admin' });
  const bad = await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { scim_group_roles: { x: 'not a role!' } } });
  assert.equal(bad.status, 400);
  const u = await createUser(token);
  const other = await createUser(token);
  const roles = async (id) => {
    const r = await api('GET', `/api/v1/organizations/${org.id}/users`);
    return r.json.users.find((x) => x.id === id).memberships[0].roles.map((x) => x.name);
  };
  assert.deepEqual(await roles(u.id), []);
  // The group's name matches the mapping case-insensitively.
  const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: admins.toUpperCase(), members: [{ value: u.id }] } });
  assert.equal(g.status, 201, g.text);
  assert.deepEqual(await roles(u.id), ['admin']);
  assert.deepEqual(await roles(other.id), []);
  await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: [{ value: other.id }] }) });
  assert.deepEqual(await roles(other.id), ['admin']);
  await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'remove', path: `members[value eq "${u.id}"]` }) });
  assert.deepEqual(await roles(u.id), []);
  // Roles the mapping does not name are the organization's own and stay.
  const put = await api('PUT', `/api/v1/organizations/${org.id}/users/${other.id}`, { json: { roles: [{ name: 'admin' }, { name: 'billing' }], metadata: {} } });
  assert.ok([200, 201].includes(put.status), put.text);
  assert.equal((await scim(token, 'DELETE', `/Groups/${g.json.id}`)).status, 204);
  assert.deepEqual(await roles(other.id), ['billing']);

  // Changing the mapping re-evaluates the members of the groups either mapping names.
  const ops = `Ops ${unique()}`;
  const og = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: ops, members: [{ value: u.id }] } });
  assert.equal(og.status, 201, og.text);
  assert.deepEqual(await roles(u.id), [], 'no mapping names Ops yet');
  const mapped = await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { scim_group_roles: { [admins]: 'admin', [ops]: 'operator' } } });
  assert.equal(mapped.status, 200, mapped.text);
  assert.deepEqual(await roles(u.id), ['operator']);
  const moved = await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { scim_group_roles: { [ops.toLowerCase()]: 'admin' } } });
  assert.equal(moved.status, 200, moved.text);
  assert.deepEqual(await roles(u.id), ['admin'], 'operator was only the old mapping\'s');
  assert.deepEqual(await roles(other.id), ['billing'], 'roles no mapping names stay');
  const cleared = await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { scim_group_roles: {} } });
  assert.equal(cleared.status, 200, cleared.text);
  assert.deepEqual(await roles(u.id), []);
});

test('a deleted organization takes its SCIM directory with it', async () => {
  const { org, token } = await tenant();
  await createUser(token);
  assert.equal((await scim(token, 'GET', '/Users')).json.totalResults, 1);
  assert.equal((await api('DELETE', `/api/v1/organizations/${org.id}`)).status, 204);
  const r = await scim(token, 'GET', '/Users');
  assert.equal(r.status, 401);
});

test('DELETE ends access: the deleted user\'s access token is refused at the demo MCP server', async () => {
  const mcpUrl = env.PORTCULLIS_DEMO_MCP_URL;
  const issuer = `${baseUrl}/resources/${env.PORTCULLIS_DEMO_RESOURCE_ID}`;
  const { auth } = await import('@modelcontextprotocol/sdk/client/auth.js');
  const { ScriptedProvider } = await import('./sdk-client.mjs');
  const { org, token } = await tenant();
  const rpc = (t) => fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${t}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
  });
  const signIn = async (email, userId) => {
    const provider = new ScriptedProvider(email, { issuer: () => issuer });
    assert.equal(await auth(provider, { serverUrl: mcpUrl, scope: 'demo:read' }), 'REDIRECT');
    assert.equal(await auth(provider, { serverUrl: mcpUrl, scope: 'demo:read', authorizationCode: provider.code }), 'AUTHORIZED');
    const ok = await rpc(provider.tokens().access_token);
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse((await ok.json()).result.content[0].text).sub, userId);
    return provider;
  };
  const refused = async (provider) => {
    let status;
    for (let i = 0; i < 30; i++) {
      status = (await rpc(provider.tokens().access_token)).status;
      if (status === 401) break;
      await sleep(200);
    }
    assert.equal(status, 401, 'refused within the deny-list sync');
    const refreshToken = provider.tokens().refresh_token;
    assert.ok(refreshToken, 'the client holds a refresh token');
    {
      const refreshed = await http('/oauth/token', {
        method: 'POST',
        form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: provider.clientInformation().client_id, resource: mcpUrl },
      });
      assert.equal(refreshed.status, 400, refreshed.text);
    }
  };

  // A user the directory created: DELETE removes the environment user with everything it held.
  const email = `gone-${unique()}@example.com`;
  const u = await createUser(token, email, { emails: [{ type: 'work', value: email, primary: true }] });
  const provider = await signIn(email, u.id);
  assert.equal((await scim(token, 'DELETE', `/Users/${u.id}`)).status, 204);
  await refused(provider);
  assert.equal((await api('GET', `/api/v1/users/${u.id}`)).status, 404);
  // The userName and the address are free again: a new POST makes a new user who can sign in.
  const again = await createUser(token, email, { emails: [{ type: 'work', value: email, primary: true }] });
  assert.notEqual(again.id, u.id);
  assert.equal((await api('GET', `/api/v1/users/${again.id}`)).json.email, email);

  // A user linked through a verified domain keeps the account but loses its sessions and tokens.
  const domain = `${unique()}.example.com`;
  const owned = (await api('POST', '/api/v1/users', { json: { email: `kept@${domain}` } })).json;
  const claimed = await api('POST', `/api/v1/organizations/${org.id}/domains`, { json: { domain } });
  await api('POST', `/api/v1/organizations/${org.id}/domains/${claimed.json.id}/verify`, { json: { method: 'admin' } });
  const linked = await createUser(token, `kept-${unique()}`, { emails: [{ type: 'work', value: `kept@${domain}`, primary: true }] });
  assert.equal(linked.id, owned.id);
  const linkedProvider = await signIn(`kept@${domain}`, owned.id);
  assert.equal((await scim(token, 'DELETE', `/Users/${linked.id}`)).status, 204);
  await refused(linkedProvider);
  const kept = await api('GET', `/api/v1/users/${owned.id}`);
  assert.equal(kept.status, 200);
  assert.deepEqual(kept.json.memberships.filter((m) => m.organization_id === org.id), []);
});

test('group members: a SCIM bound of 20,000 per request, advertised and answered with 413', async () => {
  const { token } = await tenant();
  const spc = await scim(token, 'GET', '/ServiceProviderConfig');
  assert.equal(spc.json.bulk.maxPayloadSize, 1048576);
  const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `Bound ${unique()}` } });
  const ids = (n) => Array.from({ length: n }, (_, i) => ({ value: `usr_${String(i).padStart(26, '0')}` }));
  // 15,000 members (30,000 JSON values, over the generic cap of 20,000) reach the member check:
  // unknown users, so 400 invalidValue and nothing added, not a JSON-size refusal.
  const within = await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: ids(15000) }) });
  assert.equal(within.status, 400, within.text);
  assert.equal(within.json.scimType, 'invalidValue');
  const over = await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: ids(20001) }) });
  assert.equal(over.status, 413, over.text);
  assert.match(over.json.detail, /at most 20000 group members/);
  const put = await scim(token, 'PUT', `/Groups/${g.json.id}`, { json: { schemas: [GROUP], displayName: g.json.displayName, members: ids(20001) } });
  assert.equal(put.status, 413, put.text);
  const post = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `Over ${unique()}`, members: ids(20001) } });
  assert.equal(post.status, 413, post.text);
  // A real member list of a few thousand in one PATCH works, and members appear once.
  const users = [];
  for (let i = 0; i < 40; i += 20) users.push(...(await Promise.all(Array.from({ length: 20 }, () => createUser(token)))));
  const add = await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: [...users, ...users].map((u) => ({ value: u.id })) }) });
  assert.equal(add.status, 204, add.text);
  assert.equal((await scim(token, 'GET', `/Groups/${g.json.id}`)).json.members.length, 40);
});

test('emails filters: found through the index, exact, and following every write', async () => {
  const { token } = await tenant();
  const tag = unique();
  const a = await createUser(token, `ea-${tag}`, { emails: [{ type: 'work', value: `Ann.${tag}@Example.net`, primary: true }, { type: 'home', value: `ann.${tag}@home.example` }] });
  await createUser(token, `eb-${tag}`, { emails: [{ type: 'work', value: `bob.${tag}@example.net` }] });
  const ids = async (filter) => (await scim(token, 'GET', `/Users${filterQuery(filter)}`)).json.Resources.map((u) => u.id);
  assert.deepEqual(await ids(`emails.value eq "ann.${tag}@example.NET"`), [a.id], 'case-insensitive');
  assert.deepEqual(await ids(`emails eq "ANN.${tag}@home.example"`), [a.id]);
  assert.deepEqual(await ids(`emails[type eq "work" and value eq "ann.${tag}@example.net"]`), [a.id]);
  assert.deepEqual(await ids(`emails[type eq "home" and value eq "ann.${tag}@example.net"]`), [], 'same element');
  assert.deepEqual(await ids(`emails[value eq "ann.${tag}@home.example"]`), [a.id]);
  assert.deepEqual(await ids(`emails.value eq "ann.${tag}@example.ne"`), [], 'exact, not a prefix');
  assert.deepEqual(await ids(`not (emails.value eq "ann.${tag}@example.net") and userName eq "ea-${tag}"`), []);
  const rewritten = await scim(token, 'PATCH', `/Users/${a.id}`, { json: patch({ op: 'replace', path: 'emails[type eq "work"].value', value: `new.${tag}@example.net` }) });
  assert.equal(rewritten.status, 200, rewritten.text);
  assert.deepEqual(await ids(`emails.value eq "ann.${tag}@example.net"`), []);
  assert.deepEqual(await ids(`emails.value eq "new.${tag}@example.net"`), [a.id]);
  const put = await scim(token, 'PUT', `/Users/${a.id}`, { json: userBody(`ea-${tag}`, { emails: [{ type: 'work', value: `put.${tag}@example.net` }] }) });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(await ids(`emails.value eq "new.${tag}@example.net"`), []);
  assert.deepEqual(await ids(`emails.value eq "put.${tag}@example.net"`), [a.id]);
  // A value longer than the index keeps (255 characters) is still compared exactly.
  const long = `${'l'.repeat(300)}.${tag}@example.net`;
  const l = await createUser(token, `el-${tag}`, { emails: [{ type: 'work', value: long }] });
  assert.deepEqual(await ids(`emails.value eq "${long.toUpperCase()}"`), [l.id]);
  assert.deepEqual(await ids(`emails.value eq "${long.slice(0, 299)}"`), []);
  assert.equal((await scim(token, 'DELETE', `/Users/${a.id}`)).status, 204);
  assert.deepEqual(await ids(`emails.value eq "put.${tag}@example.net"`), []);
});

test('paging: pages that follow each other, jumps, and writes between pages give the offsets of the list', async () => {
  const { token } = await tenant();
  const tag = unique();
  for (let i = 0; i < 30; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => createUser(token, `k${String(i + j).padStart(2, '0')}-${tag}`)));
  }
  const all = async (filter = '') => (await scim(token, 'GET', `/Users?count=200${filter}`)).json.Resources.map((u) => u.id);
  const page = async (start, count, filter = '') => {
    const r = await scim(token, 'GET', `/Users?startIndex=${start}&count=${count}${filter}`);
    assert.equal(r.status, 200, r.text);
    return r.json;
  };
  let expected = await all();
  assert.equal(expected.length, 30);
  // Okta's walk: each page starts where the previous ended.
  const walked = [];
  for (let s = 1; s <= 30; s += 7) walked.push(...(await page(s, 7)).Resources.map((u) => u.id));
  assert.deepEqual(walked, expected);
  // Jumps after the walk (a nearer mark plus a few skipped rows) and backwards.
  assert.deepEqual((await page(10, 5)).Resources.map((u) => u.id), expected.slice(9, 14));
  assert.deepEqual((await page(3, 4)).Resources.map((u) => u.id), expected.slice(2, 6));
  // A write between pages: the next page goes on after the row where the previous one ended
  // (an offset into the new list would skip a user), with the new list's total; a jump uses the
  // new list's offsets.
  const first = await page(1, 10);
  assert.equal((await scim(token, 'DELETE', `/Users/${expected[2]}`)).status, 204);
  await createUser(token, `k99-${tag}`);
  const old = expected;
  expected = await all();
  const second = await page(11, 10);
  assert.equal(second.totalResults, 30);
  assert.deepEqual(second.Resources.map((u) => u.id), old.slice(10, 20));
  assert.deepEqual(first.Resources.map((u) => u.id), old.slice(0, 10));
  assert.deepEqual((await page(12, 10)).Resources.map((u) => u.id), expected.slice(11, 21));
  // A PATCH that takes a user out of a filter: the filtered walk goes on after its row too.
  const f = filterQuery('active eq true').replace('?', '&');
  const before = await page(1, 10, f);
  assert.equal(before.totalResults, 30);
  const off = await scim(token, 'PATCH', `/Users/${expected[5]}`, { json: patch({ op: 'replace', path: 'active', value: false }) });
  assert.equal(off.status, 200, off.text);
  const expectedActive = await all(f);
  assert.equal(expectedActive.length, 29);
  const next = await page(11, 10, f);
  assert.equal(next.totalResults, 29);
  assert.deepEqual(next.Resources.map((u) => u.id), expectedActive.slice(9, 19));
  assert.deepEqual((await page(13, 10, f)).Resources.map((u) => u.id), expectedActive.slice(12, 22));
});

test('lookups and groups: a filtered page gives the exact total at every count; a user\'s groups come in the groups\' order, every one of 4,000 or 6,700', async () => {
  const { org, token } = await tenant();
  const tag = unique();
  // A filtered first page that is not full is answered without a count; one that is full counts.
  const users = [];
  for (const k of [1, 2, 3]) users.push(await createUser(token, `look${k}-${tag}@example.net`));
  for (const count of [1, 2, 3, 4, 100]) {
    const r = await scim(token, 'GET', `/Users${filterQuery(`userName sw "look" and userName ew "-${tag}@example.net"`, `&count=${count}`)}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.totalResults, 3, `count=${count}`);
    assert.equal(r.json.itemsPerPage, Math.min(count, 3), `count=${count}`);
    assert.deepEqual(r.json.Resources.map((u) => u.id), users.slice(0, Math.min(count, 3)).map((u) => u.id));
  }
  const none = await scim(token, 'GET', `/Users${filterQuery(`userName eq "nobody-${tag}@example.net"`)}`);
  assert.equal(none.json.totalResults, 0);
  assert.deepEqual(none.json.Resources ?? [], []);
  const twoGroups = [];
  for (const k of [1, 2]) {
    const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `Look ${k} ${tag}`, members: [{ value: users[0].id }] } });
    assert.equal(g.status, 201, g.text);
    twoGroups.push(g.json);
  }
  const groupsFilter = filterQuery(`displayName sw "Look " and displayName ew " ${tag}"`);
  for (const count of [1, 2, 3]) {
    const r = await scim(token, 'GET', `/Groups${groupsFilter}&count=${count}&excludedAttributes=members`);
    assert.equal(r.json.totalResults, 2, `groups, count=${count}`);
    assert.deepEqual(r.json.Resources.map((g) => g.id), twoGroups.slice(0, count).map((g) => g.id));
  }
  // The user's groups, in the groups' order, in a GET and in a lookup.
  const groupsOf = async (u) => {
    const one = await scim(token, 'GET', `/Users/${u.id}`);
    const found = await scim(token, 'GET', `/Users${filterQuery(`userName eq "${u.userName}"`)}`);
    assert.deepEqual(found.json.Resources[0].groups, one.json.groups);
    return (one.json.groups ?? []).map((g) => [g.value, g.display]);
  };
  assert.deepEqual(await groupsOf(users[0]), twoGroups.map((g) => [g.id, g.displayName]));
  assert.deepEqual(await groupsOf(users[1]), []);
  // The groups' order is their creation time, then their id. Times as nodes with clocks apart
  // write them (set behind the service's back): the latest id the earliest time, two groups at
  // the same time, one a microsecond after them with an earlier id.
  const timed = [];
  for (const k of [0, 1, 2, 3, 4]) {
    const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `Order ${k} ${tag}`, members: [{ value: users[2].id }] } });
    assert.equal(g.status, 201, g.text);
    timed.push(g.json);
  }
  const times = ['2026-01-01 00:00:01.000001', '2026-01-01 00:00:01', '2026-01-01 00:00:01', '2026-01-01 00:00:00', '2026-01-01 00:00:03'];
  timed.forEach((g, k) => dbQuery(`UPDATE scim_groups SET create_time = '${times[k]}' WHERE organization_id = '${org.id}' AND id = '${g.id}'`));
  const byId = (a, b) => (a.id < b.id ? -1 : 1);
  const inOrder = [timed[3], ...[timed[1], timed[2]].sort(byId), timed[0], timed[4]].map((g) => [g.id, g.displayName]);
  assert.notDeepEqual(inOrder, [...timed].sort(byId).map((g) => [g.id, g.displayName]), 'not the ids\' order');
  assert.deepEqual(await groupsOf(users[2]), inOrder);
  // More groups than MariaDB's group_concat_max_len (1 MiB) holds: users[1] in 4,000 groups of
  // 250-character names (about 1.2 MB), read from the users' column; users[0] in 6,700, more
  // than json::parse reads in one column (20,000 values, three a group), read group by group.
  // Each gets every one, in the groups' order as the database sorts them.
  const many = [...twoGroups];
  const names = Array.from({ length: 6698 }, (_, k) => `${String(k).padStart(4, '0')} ${tag} ${'n'.repeat(230)}`);
  for (let k = 0; k < names.length; k += 16) {
    const made = await Promise.all(names.slice(k, k + 16).map((displayName, j) => {
      const members = k + j < 4000 ? [{ value: users[0].id }, { value: users[1].id }] : [{ value: users[0].id }];
      return scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName, members }, check: false });
    }));
    for (const g of made) assert.equal(g.status, 201, g.text);
    many.push(...made.map((g) => g.json));
  }
  const nameOf = new Map(many.map((g) => [g.id, g.displayName]));
  const sorted = (u) => dbQuery(`SELECT g.id FROM scim_group_members m JOIN scim_groups g ON g.organization_id = m.organization_id AND g.id = m.group_id WHERE m.organization_id = '${org.id}' AND m.user_id = '${u.id}' ORDER BY g.create_time, g.id`)
    .map(([id]) => [id, nameOf.get(id)]);
  const inTheirOrder = async (u, count) => {
    const listed = await groupsOf(u);
    assert.equal(listed.length, count);
    assert.deepEqual(listed, sorted(u), 'every group, in the groups\' order');
    return listed;
  };
  await inTheirOrder(users[1], 4000);
  const listed = await inTheirOrder(users[0], 6700);
  assert.deepEqual(new Set(listed.map(([id]) => id)), new Set(many.map((g) => g.id)));
  assert.deepEqual(listed.slice(0, 2), twoGroups.map((g) => [g.id, g.displayName]), 'in the groups\' order');
});
