// The foundation as a client sees it: health, keys, environment metadata, management tokens
// through client_credentials, and the management API's authentication phase.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRemoteJWKSet, jwtVerify, decodeProtectedHeader } from 'jose';
import {
  http, env, baseUrl, basic, managementToken, cli, sleep,
  assertOAuthError, assertProblem, assertNoNulls,
} from './harness.mjs';
import { assertMatchesSpec } from './openapi.mjs';

// Every /api/v1 response of this file is also checked against docs/openapi.yaml.
async function apiHttp(pathname, options = {}) {
  const r = await http(pathname, options);
  assertMatchesSpec(options.method ?? 'GET', pathname, r);
  return r;
}

test('healthz and readyz answer 200 on a healthy stack', async () => {
  const h = await http('/healthz');
  assert.equal(h.status, 200);
  assert.equal(h.json.status, 'ok');
  const r = await http('/readyz');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.checks.database, 'ok');
  assert.equal(r.json.checks.signing_key, 'ok');
  // Per algorithm: RS256 always, and each algorithm a resource uses (tests/integration/doctor).
  assert.equal(r.json.checks.signing_keys.RS256, 'ok');
  for (const v of Object.values(r.json.checks.signing_keys)) assert.equal(v, 'ok');
});

test('/keys is a JWKS of RS256, ES256 and EdDSA keys, cacheable, open to any origin', async () => {
  const r = await http('/keys');
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /json/);
  assert.match(r.headers.get('cache-control'), /^public, max-age=\d+$/);
  assert.equal(r.headers.get('access-control-allow-origin'), '*');
  assert.ok(r.json.keys.length >= 1);
  for (const alg of ['RS256', 'ES256', 'EdDSA']) assert.ok(r.json.keys.some((k) => k.alg === alg), `a ${alg} key`);
  for (const k of r.json.keys) {
    assert.equal(k.use, 'sig');
    assert.match(k.kid, /^key_[0-9a-hjkmnp-tv-z]{26}$/);
    assert.equal(k.d, undefined, 'no private parts');
    if (k.alg === 'RS256') {
      assert.equal(k.kty, 'RSA');
      assert.ok(Buffer.from(k.n, 'base64url').length >= 256, 'RSA-2048 or larger');
      assert.equal(k.p, undefined);
    } else if (k.alg === 'ES256') {
      assert.deepEqual([k.kty, k.crv], ['EC', 'P-256']);
      assert.equal(Buffer.from(k.x, 'base64url').length, 32);
      assert.equal(Buffer.from(k.y, 'base64url').length, 32);
    } else {
      assert.deepEqual([k.alg, k.kty, k.crv], ['EdDSA', 'OKP', 'Ed25519']);
      assert.equal(Buffer.from(k.x, 'base64url').length, 32);
    }
  }
  const pre = await http('/keys', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), '*');
  assert.match(pre.headers.get('access-control-allow-headers'), /MCP-Protocol-Version/i);
  assert.match(pre.headers.get('access-control-allow-headers'), /\bDPoP\b/);
});

test('a management token is an RS256 at+jwt that jose verifies against /keys', async () => {
  const token = await managementToken();
  const header = decodeProtectedHeader(token);
  assert.equal(header.alg, 'RS256');
  assert.equal(header.typ, 'at+jwt');
  const jwks = createRemoteJWKSet(new URL(baseUrl + '/keys'));
  const { payload } = await jwtVerify(token, jwks, {
    issuer: baseUrl,
    audience: baseUrl + '/api',
    typ: 'at+jwt',
    algorithms: ['RS256'],
  });
  assert.equal(payload.sub, env.PORTCULLIS_CLIENT_ID);
  assert.equal(payload.client_id, env.PORTCULLIS_CLIENT_ID);
  assert.ok(payload.scope.split(' ').includes('users:read'));
  assert.equal(payload.nbf, payload.iat);
  assert.ok(payload.exp > payload.iat);
  assert.ok(payload.jti.length >= 16);
});

test('environment metadata: byte-exact issuer, no nulls, CORS', async () => {
  const r = await http('/.well-known/oauth-authorization-server');
  assert.equal(r.status, 200);
  assert.equal(r.json.issuer, baseUrl);
  assert.equal(r.json.token_endpoint, baseUrl + '/oauth/token');
  assert.equal(r.json.jwks_uri, baseUrl + '/keys');
  assert.deepEqual(r.json.grant_types_supported, ['client_credentials']);
  assert.equal(r.json.authorization_endpoint, undefined);
  assert.equal(r.headers.get('access-control-allow-origin'), '*');
  assertNoNulls(assert, r.json);
});

test('environment OpenID configuration: none (OIDC Discovery requires an authorization endpoint it lacks)', async () => {
  const r = await http('/.well-known/openid-configuration');
  assertOAuthError(assert, r, 404, 'not_found');
  assert.equal(r.json.authorization_endpoint, undefined);
  assert.match(r.json.error_description, /openid-configuration\/resources\//);
});

test('token endpoint: client authentication rules', async () => {
  const id = env.PORTCULLIS_CLIENT_ID;
  const secret = env.PORTCULLIS_CLIENT_SECRET;
  // client_secret_post works too
  const post = await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials', client_id: id, client_secret: secret } });
  assert.equal(post.status, 200, post.text);
  assert.equal(post.json.token_type, 'Bearer');
  assert.equal(post.headers.get('cache-control'), 'no-store');
  assert.ok(post.json.expires_in > 0);
  // narrowing the scope
  const narrow = await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials', scope: 'users:read' }, headers: { authorization: basic(id, secret) } });
  assert.equal(narrow.json.scope, 'users:read');
  // a scope the client does not have
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials', scope: 'users:read admin' }, headers: { authorization: basic(id, secret) } }), 400, 'invalid_scope');
  // wrong secret with Basic: 401 + Basic challenge
  const wrong = await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials' }, headers: { authorization: basic(id, secret + 'x') } });
  assertOAuthError(assert, wrong, 401, 'invalid_client');
  assert.match(wrong.headers.get('www-authenticate'), /^Basic/);
  // unknown client, via post
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials', client_id: 'api_nobody', client_secret: 'x' } }), 401, 'invalid_client');
  // both methods at once
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials', client_secret: secret }, headers: { authorization: basic(id, secret) } }), 400, 'invalid_request');
  // no authentication at all
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials' } }), 401, 'invalid_client');
  // grant types
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', form: { grant_type: 'password', username: 'a', password: 'b' }, headers: { authorization: basic(id, secret) } }), 400, 'unsupported_grant_type');
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', form: {}, headers: { authorization: basic(id, secret) } }), 400, 'invalid_request');
  // a repeated parameter
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', body: 'grant_type=client_credentials&grant_type=client_credentials', headers: { authorization: basic(id, secret), 'content-type': 'application/x-www-form-urlencoded' } }), 400, 'invalid_request');
  // not a form
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', json: { grant_type: 'client_credentials' }, headers: { authorization: basic(id, secret) } }), 400, 'invalid_request');
});

test('management API: authentication phase and scopes', async () => {
  // no token, a non-Bearer header, a forged token
  for (const headers of [{}, { authorization: basic('a', 'b') }, { authorization: 'Bearer not.a.jwt' }]) {
    const r = await apiHttp('/api/v1/clients/api_x', { headers });
    assertProblem(assert, r, 401, 'unauthenticated');
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
  }
  const token = await managementToken();
  // a token whose signature was tampered with
  const [h, p, s] = token.split('.');
  const flipped = s[0] === 'A' ? 'B' + s.slice(1) : 'A' + s.slice(1);
  assertProblem(assert, await apiHttp('/api/v1/clients/api_x', { headers: { authorization: `Bearer ${h}.${p}.${flipped}` } }), 401, 'unauthenticated');
  // a token whose claims were changed (signature no longer matches)
  const claims = JSON.parse(Buffer.from(p, 'base64url'));
  claims.aud = 'https://elsewhere.example';
  const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
  assertProblem(assert, await apiHttp('/api/v1/clients/api_x', { headers: { authorization: `Bearer ${forged}` } }), 401, 'unauthenticated');

  const auth = { authorization: `Bearer ${token}` };
  assertProblem(assert, await apiHttp('/api/v1/clients/api_nothere', { headers: auth }), 404, 'not_found');
  // invalid JSON, a non-object, bad fields
  assertProblem(assert, await apiHttp('/api/v1/clients', { method: 'POST', headers: auth, json: '{"name": "x",' }), 400, 'invalid_argument');
  assertProblem(assert, await apiHttp('/api/v1/clients', { method: 'POST', headers: auth, json: '[1,2]' }), 400, 'invalid_argument');
  assertProblem(assert, await apiHttp('/api/v1/clients', { method: 'POST', headers: auth, json: { name: 'x', scopes: ['nope'] } }), 400, 'invalid_argument');
  assertProblem(assert, await apiHttp('/api/v1/clients', { method: 'POST', headers: auth, json: { name: '', scopes: ['users:read'] } }), 400, 'invalid_argument');

  // create a narrow client, use it, see its limits, delete it
  const created = await apiHttp('/api/v1/clients', { method: 'POST', headers: auth, json: { name: 'reader', scopes: ['users:read'] } });
  assert.equal(created.status, 201, created.text);
  assert.match(created.json.client_id, /^api_[0-9a-z]{26}$/);
  assert.ok(created.json.client_secret.length >= 43);
  assert.deepEqual(created.json.scopes, ['users:read']);
  assert.match(created.json.create_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(created.headers.get('cache-control'), 'no-store');
  assertNoNulls(assert, created.json);
  const fetched = await apiHttp(`/api/v1/clients/${created.json.client_id}`, { headers: auth });
  assert.equal(fetched.status, 200);
  assert.equal(fetched.json.client_secret, undefined, 'the secret is shown once');

  const readerToken = await managementToken(created.json.client_id, created.json.client_secret);
  const escalate = await apiHttp('/api/v1/clients', { method: 'POST', headers: { authorization: `Bearer ${readerToken}` }, json: { name: 'x', scopes: ['users:write'] } });
  assertProblem(assert, escalate, 403, 'permission_denied');
  const cannotDelete = await apiHttp(`/api/v1/clients/${env.PORTCULLIS_CLIENT_ID}`, { method: 'DELETE', headers: { authorization: `Bearer ${readerToken}` } });
  assertProblem(assert, cannotDelete, 403, 'permission_denied');

  const del = await apiHttp(`/api/v1/clients/${created.json.client_id}`, { method: 'DELETE', headers: auth });
  assert.equal(del.status, 204);
  // a deleted client's live token stops working at once, and it can get no new one
  assertProblem(assert, await apiHttp(`/api/v1/clients/${env.PORTCULLIS_CLIENT_ID}`, { headers: { authorization: `Bearer ${readerToken}` } }), 401, 'unauthenticated');
  await assert.rejects(managementToken(created.json.client_id, created.json.client_secret));
});

test('key rotation publishes the next key before it signs', async () => {
  const before = (await http('/keys')).json.keys.map((k) => k.kid);
  const signerBefore = decodeProtectedHeader(await managementToken()).kid;
  assert.ok(before.includes(signerBefore));

  // The window starts inside the command, before it makes the keys (lib/keys/key_store.cc):
  // no earlier than `rotated`, and publication can only begin once it returns (`returned`). On a
  // loaded machine making the RSA key takes seconds, so every wait below is measured from the
  // instant it depends on, not from the previous step.
  const rotated = Date.now();
  const out = cli('keys', 'rotate');
  const returned = Date.now();
  // One new key per algorithm; management tokens are RS256.
  const newKid = out.match(/(key_[0-9a-z]{26}) \(RS256\)/)[1];
  assert.match(out, /key_[0-9a-z]{26} \(ES256\)/);
  assert.match(out, /key_[0-9a-z]{26} \(EdDSA\)/);
  const window = Number(process.env.PORTCULLIS_KEY_PREPUBLISH_SECONDS ?? 6);
  const refresh = Number(process.env.PORTCULLIS_KEYRING_REFRESH_SECONDS ?? 1);
  // nginx answers /keys from its cache for at most 2 s (nginx/portcullis/document-cache.conf).
  const nginxCache = 2;

  const until = (instant) => sleep(Math.max(0, instant - Date.now()));
  // Within one refresh interval and nginx's cache every worker and nginx publish it, but
  // nothing is signed with it yet.
  await until(returned + (refresh + nginxCache + 0.2) * 1000);
  const during = (await http('/keys')).json.keys.map((k) => k.kid);
  assert.ok(during.includes(newKid), 'the new key is published');
  assert.ok(during.includes(signerBefore), 'the current key is still published');
  const signerDuring = decodeProtectedHeader(await managementToken()).kid;
  assert.ok(Date.now() < rotated + window * 1000,
    `the checks inside the window ended after it (keys rotate took ${returned - rotated} ms): lengthen PORTCULLIS_KEY_PREPUBLISH_SECONDS`);
  assert.equal(signerDuring, signerBefore);

  // After the window (and a key-ring refresh) it signs, and the retired key stays published for
  // live tokens.
  await until(returned + (window + refresh + 0.5) * 1000);
  const after = await managementToken();
  assert.equal(decodeProtectedHeader(after).kid, newKid);
  const keysAfter = (await http('/keys')).json.keys.map((k) => k.kid);
  assert.ok(keysAfter.includes(signerBefore), 'the retired key stays published');
  const jwks = createRemoteJWKSet(new URL(baseUrl + '/keys'));
  await jwtVerify(after, jwks, { issuer: baseUrl, audience: baseUrl + '/api' });
  assert.match(cli('keys', 'list'), new RegExp(`${newKid}\\s+RS256\\s+signing`));
});

test('token endpoint: 1,200 requests a minute per client, then 429 with Retry-After', async () => {
  const admin = { authorization: `Bearer ${await managementToken()}` };
  const c = (await apiHttp('/api/v1/clients', { method: 'POST', headers: admin, json: { name: 'rate-limited', scopes: ['users:read'] } })).json;
  // Fixed one-minute windows: start early in one so the burst cannot straddle two.
  const second = new Date().getUTCSeconds();
  if (second > 40) await sleep((61 - second) * 1000);
  const statuses = [];
  let limited;
  const lane = async () => {
    while (statuses.length < 1230) {
      const r = await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials' }, headers: { authorization: basic(c.client_id, c.client_secret) } });
      statuses.push(r.status);
      if (r.status === 429) limited = r;
    }
  };
  await Promise.all(Array.from({ length: 12 }, lane));
  const ok = statuses.filter((s) => s === 200).length;
  assert.equal(ok, 1200, `exactly the limit is served: ${ok}`);
  assert.ok(limited, 'the requests past the limit are refused');
  assertOAuthError(assert, limited, 429, 'temporarily_unavailable');
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  assert.ok(statuses.every((s) => s === 200 || s === 429));
});

test('GET /api/v1/clients pages through API clients with opaque tokens', async () => {
  const admin = { authorization: `Bearer ${await managementToken()}` };
  for (let i = 0; i < 3; i++) {
    await apiHttp('/api/v1/clients', { method: 'POST', headers: admin, json: { name: `lister-${i}`, scopes: ['users:read'] } });
  }
  // Walk every page forward, then back from the last one: the same clients in the same order.
  const walk = async (size) => {
    const pages = [];
    let page = await apiHttp(`/api/v1/clients?page_size=${size}`, { headers: admin });
    assert.equal(page.status, 200, page.text);
    assert.equal(page.json.prev_page_token, '', 'nothing before the first page');
    pages.push(page.json);
    while (page.json.next_page_token) {
      page = await apiHttp(`/api/v1/clients?page_size=${size}&page_token=${page.json.next_page_token}`, { headers: admin });
      pages.push(page.json);
    }
    return pages;
  };
  const forward = await walk(100);
  const ids = forward.flatMap((p) => p.clients.map((c) => c.client_id));
  assert.ok(forward.every((p) => p.total_size === ids.length), 'total_size counts every client on every page');
  assert.equal(new Set(ids).size, ids.length, 'no duplicates');
  assert.ok(forward.flatMap((p) => p.clients).every((c) => c.client_secret === undefined), 'never a secret in a listing');
  const small = await walk(7);
  assert.deepEqual(small.flatMap((p) => p.clients.map((c) => c.client_id)), ids);
  let page = small.at(-1);
  const back = [];
  while (page.prev_page_token) {
    page = (await apiHttp(`/api/v1/clients?page_size=7&page_token=${page.prev_page_token}`, { headers: admin })).json;
    back.unshift(...page.clients.map((c) => c.client_id));
  }
  assert.deepEqual(back, ids.slice(0, back.length));
  assert.equal(back.length + small.at(-1).clients.length, ids.length);
  for (const bad of ['page_size=0', 'page_size=101', 'page_size=abc', 'page_token=tampered']) {
    assertProblem(assert, await apiHttp(`/api/v1/clients?${bad}`, { headers: admin }), 400, 'invalid_argument');
  }
});
