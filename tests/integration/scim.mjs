// Helpers for the SCIM 2.0 tests (contract §7 directories, §9): directories with their tokens,
// SCIM calls, and independent checks of every response (npm scimmy: RFC 7643 schemas,
// ListResponse, Error) and of every filter sent (npm scim2-parse-filter: the RFC 7644 grammar).
import assert from 'node:assert/strict';
import SCIMMY from 'scimmy';
import { parse as parseFilter } from 'scim2-parse-filter';
import { http } from './harness.mjs';
import { api, createOrg } from './management.mjs';

SCIMMY.Schemas.User.extend(SCIMMY.Schemas.EnterpriseUser, false);

export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

// An organization with a SCIM directory: { org, directory, token }.
export async function tenant() {
  const org = await createOrg();
  const r = await api('POST', `/api/v1/organizations/${org.id}/directories`, { json: { name: 'Entra ID' } });
  assert.equal(r.status, 201, r.text);
  return { org, directory: r.json, token: r.json.token };
}

// Every key of `input` that scimmy's coerce dropped: our responses must carry none it does not know.
function droppedKeys(input, output, where = '') {
  const dropped = [];
  for (const [k, v] of Object.entries(input)) {
    const match = Object.keys(output ?? {}).find((o) => o.toLowerCase() === k.toLowerCase());
    if (match === undefined) dropped.push(where + k);
    else if (v && typeof v === 'object' && !Array.isArray(v)) dropped.push(...droppedKeys(v, output[match], `${where}${k}.`));
  }
  return dropped;
}

export function checkResource(resource) {
  assert.ok(Array.isArray(resource.schemas), JSON.stringify(resource));
  const type = resource.meta?.resourceType;
  if (type === 'User' || resource.schemas.includes(USER)) {
    // A projection (attributes=…) may leave userName out; scimmy requires it, so lend one.
    const out = SCIMMY.Schemas.User.definition.coerce({ userName: 'projected', ...structuredClone(resource) }, 'out');
    const dropped = droppedKeys(resource, out).filter((k) => !k.startsWith('groups'));
    assert.deepEqual(dropped, [], `scimmy dropped ${dropped} of ${JSON.stringify(resource)}`);
  } else if (type === 'Group' || resource.schemas.includes(GROUP)) {
    const out = SCIMMY.Schemas.Group.definition.coerce({ displayName: 'projected', ...structuredClone(resource) }, 'out');
    const dropped = droppedKeys(resource, out);
    assert.deepEqual(dropped, [], `scimmy dropped ${dropped} of ${JSON.stringify(resource)}`);
  }
}

// Validates a SCIM response with scimmy, whatever it is.
export function checkResponse(r) {
  if (r.status === 204 || r.status === 304) {
    assert.equal(r.text, '', `${r.status} has no body`);
    return;
  }
  assert.match(r.headers.get('content-type') ?? '', /^application\/scim\+json/, `${r.status} ${r.text}`);
  const body = r.json;
  assert.ok(body && typeof body === 'object', r.text);
  if (r.status >= 400) {
    assert.deepEqual(body.schemas, [ERROR], r.text);
    assert.equal(body.status, String(r.status), r.text);
    if (r.status !== 413) {
      // scimmy maps tooMany to 413 (RFC 7644 §3.12 says 400), so skip its pairing check there.
      if (body.scimType !== 'tooMany') new SCIMMY.Messages.ErrorResponse({ status: r.status, scimType: body.scimType, detail: body.detail });
    }
    return;
  }
  if (body.schemas?.includes(LIST)) {
    const list = new SCIMMY.Messages.ListResponse(structuredClone(body));
    assert.equal(list.totalResults, body.totalResults);
    for (const k of ['totalResults', 'startIndex', 'itemsPerPage']) assert.ok(Number.isInteger(body[k]), `${k} is an integer`);
    assert.ok(Array.isArray(body.Resources));
    for (const res of body.Resources) if (res.meta?.resourceType === 'User' || res.meta?.resourceType === 'Group') checkResource(res);
    return;
  }
  if (body.meta?.resourceType === 'User' || body.meta?.resourceType === 'Group') checkResource(body);
}

// A SCIM request, its response checked; `json` is sent as application/scim+json.
export async function scim(token, method, path, { json, body, headers = {}, check = true } = {}) {
  const h = { ...headers };
  if (token !== null) h.authorization ??= `Bearer ${token}`;
  if (json !== undefined) h['content-type'] ??= 'application/scim+json';
  const r = await http(`/scim/v2${path}`, { method, headers: h, json, body });
  if (check) checkResponse(r);
  return r;
}

// `?filter=…` for a filter scim2-parse-filter accepts (the tests send only grammatical filters
// through here; the malformed ones go through badFilter).
export function filterQuery(filter, extra = '') {
  parseFilter(filter);
  return `?filter=${encodeURIComponent(filter)}${extra}`;
}

export function assertFilterRejectedByOracle(filter) {
  assert.throws(() => parseFilter(filter), `scim2-parse-filter rejects ${filter}`);
}

export const patch = (...ops) => ({ schemas: [PATCH_OP], Operations: ops });
