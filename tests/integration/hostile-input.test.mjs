// Hostile input is refused by count, before any handler or authentication runs (issue 9): form
// bodies and query strings over 256 parameters, Cookie headers over 256 cookies, JSON nested
// deeper than 64 levels. Each answer is a 400 in its path family's shape (contract §0). How long
// the refusals take is measured by bench/hostile, never here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { http, env, managementToken, assertOAuthError, assertScimError, assertProblem } from './harness.mjs';

const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };

// n distinct parameter names: p0=1&p1=1&...
const params = (n, prefix = 'p') => Array.from({ length: n }, (_, i) => `${prefix}${i}=1`).join('&');

test('the 120,000-parameter 840 kB form on POST /oauth/token is refused with 400', async () => {
  // Names in base 36 (at most four characters), values of one or two digits: 840,011 bytes, as
  // reported.
  const body = Array.from({ length: 120000 }, (_, i) => `${i.toString(36)}=${i % 5 < 2 ? '12' : '1'}`).join('&');
  assert.equal(body.length, 840011);
  const r = await http('/oauth/token', { method: 'POST', body, headers: formHeaders });
  assertOAuthError(assert, r, 400, 'invalid_request');
  assert.match(r.json.error_description, /more than 256 parameters/);
});

test('form bodies: 256 parameters are read, 257 are refused on every form endpoint', async () => {
  // At the limit the form is parsed and the endpoint answers on its merits (no grant_type here
  // would be a different error, so send a repeated name to prove the whole form was read).
  const atLimit = `${params(254)}&grant_type=x&grant_type=y`;
  const ok = await http('/oauth/token', { method: 'POST', body: atLimit, headers: formHeaders });
  assertOAuthError(assert, ok, 400, 'invalid_request');
  assert.match(ok.json.error_description, /grant_type is repeated/);
  for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/introspect']) {
    const r = await http(path, { method: 'POST', body: params(257), headers: formHeaders });
    assertOAuthError(assert, r, 400, 'invalid_request');
    assert.match(r.json.error_description, /more than 256 parameters/, path);
  }
  const authorize = await http('/oauth/authorize', { method: 'POST', body: params(257), headers: formHeaders });
  assert.equal(authorize.status, 400);
});

test('a repeated parameter is still named, first repeat first, among many', async () => {
  const body = `b=1&${params(200)}&a=1&b=2&a=2`;
  const r = await http('/oauth/token', { method: 'POST', body, headers: formHeaders });
  assertOAuthError(assert, r, 400, 'invalid_request');
  assert.equal(r.json.error_description, 'parameter b is repeated');
});

test('query strings over 256 parameters get 400 in each family', async () => {
  const token = await managementToken();
  const q = `?${params(257)}`;
  assertOAuthError(assert, await http(`/oauth/authorize${q}`), 400, 'invalid_request');
  assertOAuthError(assert, await http(`/keys${q}`), 400, 'invalid_request');
  const api = await http(`/api/v1/users${q}`, { headers: { authorization: `Bearer ${token}` } });
  assertProblem(assert, api, 400, 'invalid_argument');
  assert.match(api.json.detail, /query string has more than 256 parameters/);
  assertScimError(assert, await http(`/scim/v2/Users${q}`), 400);
  // 256 are fine: /keys ignores its query.
  assert.equal((await http(`/keys?${params(256)}`)).status, 200);
});

test('a Cookie header with more than 256 cookies gets 400; 256 are fine', async () => {
  const cookies = (n) => Array.from({ length: n }, (_, i) => `c${i}=v`).join('; ');
  const r = await http('/keys', { headers: { cookie: cookies(257) } });
  assertOAuthError(assert, r, 400, 'invalid_request');
  assert.match(r.json.error_description, /more than 256 cookies/);
  assert.equal((await http('/keys', { headers: { cookie: cookies(256) } })).status, 200);
});

test('JSON nested deeper than 64 levels gets 400 in each family', async () => {
  const token = await managementToken();
  const deep = `${'['.repeat(1000)}${']'.repeat(1000)}`;
  const dcr = await http(`/resources/${env.PORTCULLIS_DEMO_RESOURCE_ID}/client_register`, {
    method: 'POST', body: deep, headers: { 'content-type': 'application/json' },
  });
  assertOAuthError(assert, dcr, 400);
  assert.match(dcr.json.error_description, /nested more than 64 levels/);
  const api = await http('/api/v1/organizations', {
    method: 'POST', body: `{"a":${deep}}`, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  });
  assertProblem(assert, api, 400, 'invalid_argument');
  assert.match(api.json.detail, /nested more than 64 levels/);
});

test('JSON with more than 20,000 values gets 400 before it is parsed', async () => {
  const body = `{"redirect_uris":[${'0,'.repeat(480000)}0]}`;
  const dcr = await http(`/resources/${env.PORTCULLIS_DEMO_RESOURCE_ID}/client_register`, {
    method: 'POST', body, headers: { 'content-type': 'application/json' },
  });
  assertOAuthError(assert, dcr, 400, 'invalid_client_metadata');
  assert.match(dcr.json.error_description, /more than 20000 values/);
});

test('authorize: a scope over 2,000 characters is refused whole; unknown names are echoed short', async () => {
  const c = await http(`/resources/${env.PORTCULLIS_DEMO_RESOURCE_ID}/client_register`, {
    method: 'POST', json: { client_name: 'hostile scopes', redirect_uris: ['http://127.0.0.1:3000/cb'], token_endpoint_auth_method: 'none' },
  });
  assert.equal(c.status, 201, c.text);
  const authorize = (scope) => http('/oauth/authorize', {
    method: 'POST', headers: formHeaders,
    body: new URLSearchParams({ response_type: 'code', client_id: c.json.client_id, code_challenge: 'A'.repeat(43), code_challenge_method: 'S256', scope }).toString(),
  });
  const flood = await authorize(Array.from({ length: 120000 }, (_, i) => `s${i.toString(36)}`).join(' '));
  assert.equal(flood.status, 303);
  const back = new URL(flood.headers.get('location'));
  assert.equal(back.searchParams.get('error'), 'invalid_scope');
  assert.equal(back.searchParams.get('error_description'), 'scope is longer than 2000 characters');
  const long = await authorize('x'.repeat(1999));
  assert.equal(long.status, 303);
  assert.equal(new URL(long.headers.get('location')).searchParams.get('error_description'), `unknown scope ${'x'.repeat(64)}`);
});
