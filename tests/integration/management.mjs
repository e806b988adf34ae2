// Helpers for tests of the management API (contract §7): calls with a management token whose
// responses are checked against docs/openapi.yaml, API clients with chosen scopes, and the
// objects most tests need (organizations, users, memberships).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { managementToken, dbQuery, sleep } from './harness.mjs';
import { specHttp } from './openapi.mjs';

export const unique = () => randomBytes(6).toString('hex');

let adminToken;
// A token of the bootstrap client (every scope).
export async function admin() {
  adminToken ??= await managementToken();
  return adminToken;
}

// A management API call with a Bearer token (the bootstrap client's unless given; `null` for
// none), its response checked against the OpenAPI document.
export async function api(method, pathname, { token, json, body, headers = {} } = {}) {
  const h = { ...headers };
  if (token !== null) h.authorization = `Bearer ${token ?? (await admin())}`;
  return specHttp(method, pathname, { json, body, headers: h });
}

// A token of a new API client holding only `scopes`.
export async function tokenWithScopes(scopes) {
  const r = await api('POST', '/api/v1/clients', { json: { name: `test-${unique()}`, scopes } });
  assert.equal(r.status, 201, r.text);
  return managementToken(r.json.client_id, r.json.client_secret);
}

export async function createOrg(fields = {}) {
  const r = await api('POST', '/api/v1/organizations', { json: { display_name: `Org ${unique()}`, ...fields } });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

export async function createUser(fields = {}) {
  const r = await api('POST', '/api/v1/users', { json: { email: `u-${unique()}@example.com`, ...fields } });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

export async function addMember(orgId, userId, body = { roles: [{ name: 'member' }], metadata: {} }) {
  const r = await api('PUT', `/api/v1/organizations/${orgId}/users/${userId}`, { json: body });
  assert.ok(r.status === 201 || r.status === 200, r.text);
  return r.json;
}

// The events recorded with `column` = `id` (no events API yet: read from the store). The
// event phase runs after the response was sent, so wait for them a little.
export async function eventsOf(type, column, id) {
  assert.match(type, /^[a-z.]+$/);
  assert.match(column, /^(organization_id|user_id)$/);
  assert.match(id, /^[a-z]+_[0-9a-z]+$/);
  for (let i = 0; i < 30; i++) {
    const rows = dbQuery(`SELECT id, organization_id, user_id, data FROM events WHERE type = '${type}' AND ${column} = '${id}'`);
    if (rows.length) {
      return rows.map(([eid, organization_id, user_id, data]) => ({ id: eid, organization_id, user_id, data: JSON.parse(data) }));
    }
    await sleep(100);
  }
  return [];
}
