// The authorization code flow end to end over the real stack (mcp-auth.md §5 checks 4–15,
// 20–25; contract §3–§5): authorize → sign-in by e-mailed code → consent → code → tokens →
// refresh, revocation, introspection, with every negative case that must fail.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, decodeJwt } from 'jose';
import { http, baseUrl, basic, managementToken, assertOAuthError, assertNoNulls, dbQuery, sleep } from './harness.mjs';
import { bindingDigest, openCode, sealCode } from './sealed-code.mjs';
import { Browser, completeAuthorization } from './browser.mjs';
import { api } from './management.mjs';

const verifierOf = () => randomBytes(32).toString('base64url');
const challengeOf = (v) => createHash('sha256').update(v).digest('base64url');
const uniq = () => randomBytes(4).toString('hex');

let admin;
let R1; // resource with read/write scopes
let R2; // another resource
let publicClient;
let confidentialClient;
const REDIRECT = 'http://127.0.0.1:3000/callback';

async function createResource(name, serverUrl, extra = {}) {
  const r = await http('/api/v1/resources', {
    method: 'POST',
    headers: admin,
    json: {
      name, server_url: serverUrl, dcr_enabled: true, cimd_enabled: true, access_token_ttl_seconds: 600,
      scopes: [{ name: 'todo:read', description: 'Read your to-do items' }, { name: 'todo:write', description: 'Change your to-do items' }],
      ...extra,
    },
  });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

async function register(resource, body) {
  const r = await http(`/resources/${resource.id}/client_register`, { method: 'POST', json: body });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

function authorizeUrl(client, { resource, verifier = verifierOf(), scope, state = uniq(), redirect = REDIRECT, extra = {} } = {}) {
  const u = new URL(baseUrl + '/oauth/authorize');
  const params = { response_type: 'code', client_id: client.client_id, redirect_uri: redirect, state, code_challenge: challengeOf(verifier), code_challenge_method: 'S256', ...extra };
  if (scope) params.scope = scope;
  if (resource) params.resource = resource;
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return { url: u.href, verifier, state };
}

// A full interactive authorization; returns {code, state, iss, browser, verifier}.
async function authorizeInteractively(client, options = {}, email = `u-${uniq()}@example.com`, browser = new Browser()) {
  const a = authorizeUrl(client, options);
  const page = await completeAuthorization(browser, a.url, email);
  assert.ok(page.location?.startsWith(options.redirect ?? REDIRECT), `redirected to the client: ${page.status} ${page.location} ${page.html?.slice(0, 500)}`);
  const back = new URL(page.location);
  return { code: back.searchParams.get('code'), state: back.searchParams.get('state'), iss: back.searchParams.get('iss'), error: back.searchParams.get('error'), browser, verifier: a.verifier, sentState: a.state, email };
}

async function exchange(client, code, verifier, extra = {}, auth = 'none') {
  const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, ...extra };
  const headers = {};
  if (auth === 'basic') headers.authorization = basic(client.client_id, client.client_secret);
  else form.client_id = client.client_id;
  return http('/oauth/token', { method: 'POST', form, headers });
}

async function refresh(client, refreshToken, extra = {}) {
  return http('/oauth/token', { method: 'POST', form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.client_id, ...extra } });
}

async function introspect(token) {
  return http('/oauth/introspect', { method: 'POST', form: { token }, headers: admin });
}

before(async () => {
  admin = { authorization: `Bearer ${await managementToken()}` };
  R1 = await createResource('Todo MCP', `https://mcp1-${uniq()}.test/mcp`);
  R2 = await createResource('Other MCP', `https://mcp2-${uniq()}.test/mcp`);
  publicClient = await register(R1, { client_name: 'Flow Test', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });
  confidentialClient = await register(R1, { client_name: 'Server App', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' });
});

test('happy path: sign-in, consent, code with state and iss, tokens, a verifiable RFC 9068 JWT', async () => {
  const a = await authorizeInteractively(publicClient, { resource: R1.server_url, scope: 'todo:read' });
  assert.ok(a.code);
  assert.equal(a.state, a.sentState);
  assert.equal(a.iss, `${baseUrl}/resources/${R1.id}`);
  const t = await exchange(publicClient, a.code, a.verifier, { resource: R1.server_url });
  assert.equal(t.status, 200, t.text);
  assert.equal(t.headers.get('cache-control'), 'no-store');
  assert.equal(t.json.token_type, 'Bearer');
  assert.equal(t.json.scope, 'todo:read');
  assert.equal(t.json.expires_in, 600);
  assert.ok(t.json.refresh_token);
  assertNoNulls(assert, t.json);
  const jwks = createRemoteJWKSet(new URL(baseUrl + '/keys'));
  const { payload, protectedHeader } = await jwtVerify(t.json.access_token, jwks, { issuer: `${baseUrl}/resources/${R1.id}`, audience: R1.server_url, typ: 'at+jwt' });
  assert.equal(protectedHeader.alg, 'RS256');
  assert.match(payload.sub, /^usr_[0-9a-z]{26}$/);
  assert.equal(payload.client_id, publicClient.client_id);
  assert.equal(payload.scope, 'todo:read');
  assert.equal(payload.exp - payload.iat, 600);
  assert.equal(typeof payload.aud, 'string');
  assert.ok(payload.jti && payload.auth_time <= payload.iat);
  const intro = await introspect(t.json.access_token);
  assert.equal(intro.json.active, true);
  assert.equal(intro.json.client_id, publicClient.client_id);
  assert.equal(intro.json.token_type, 'Bearer');
});

test('remembered consent skips the consent page; prompt=consent brings it back; deny → access_denied', async () => {
  const first = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const browser = first.browser;
  // same browser, same scopes: straight back to the client
  let page = await browser.follow(authorizeUrl(publicClient, { scope: 'todo:read' }).url);
  assert.ok(page.location?.startsWith(REDIRECT), 'no pages the second time');
  assert.ok(new URL(page.location).searchParams.get('code'));
  // prompt=consent forces the page; deny says access_denied with state and iss
  const forced = authorizeUrl(publicClient, { scope: 'todo:read', extra: { prompt: 'consent' } });
  page = await browser.follow(forced.url);
  assert.match(page.html, /decision/);
  page = await browser.submit(page, 'decision', { decision: 'deny' });
  const back = new URL(page.location);
  assert.equal(back.searchParams.get('error'), 'access_denied');
  assert.equal(back.searchParams.get('state'), forced.state);
  assert.equal(back.searchParams.get('iss'), `${baseUrl}/resources/${R1.id}`);
  // step-up: a larger scope asks again, and the token then carries both
  const step = authorizeUrl(publicClient, { scope: 'todo:read todo:write' });
  page = await browser.follow(step.url);
  assert.match(page.html, /todo:write/);
  page = await browser.submit(page, 'decision', { decision: 'allow' });
  const code = new URL(page.location).searchParams.get('code');
  const t = await exchange(publicClient, code, step.verifier);
  assert.equal(t.json.scope.split(' ').sort().join(' '), 'todo:read todo:write');
});

test('signed in with a remembered consent: every authorize returns its own code at once, each usable once; prompt=none beyond the consent → consent_required', async () => {
  const first = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const browser = first.browser;
  const codes = [];
  for (const extra of [{}, { prompt: 'none' }]) {
    const a = authorizeUrl(publicClient, { scope: 'todo:read', extra });
    const page = await browser.follow(a.url);
    assert.ok(page.location?.startsWith(REDIRECT), `straight back to the client: ${page.status} ${page.html?.slice(0, 300)}`);
    const back = new URL(page.location);
    assert.equal(back.searchParams.get('state'), a.state);
    assert.equal(back.searchParams.get('iss'), `${baseUrl}/resources/${R1.id}`);
    codes.push({ code: back.searchParams.get('code'), verifier: a.verifier });
  }
  assert.ok(codes[0].code && codes[1].code && codes[0].code !== codes[1].code);
  const subjects = [];
  for (const { code, verifier } of codes) {
    const t = await exchange(publicClient, code, verifier);
    assert.equal(t.status, 200, t.text);
    assert.equal(t.json.scope, 'todo:read');
    subjects.push(decodeJwt(t.json.access_token).sub);
    const again = await exchange(publicClient, code, verifier);
    assertOAuthError(assert, again, 400, 'invalid_grant');
  }
  assert.equal(subjects[0], subjects[1], 'both codes are the signed-in user\'s');
  // A scope the user never consented to, with prompt=none: the client hears consent_required,
  // and the consent page is not shown.
  const beyond = authorizeUrl(publicClient, { scope: 'todo:read todo:write', extra: { prompt: 'none' } });
  const page = await browser.follow(beyond.url);
  assert.ok(page.location?.startsWith(REDIRECT), `back to the client: ${page.status} ${page.html?.slice(0, 300)}`);
  const back = new URL(page.location);
  assert.equal(back.searchParams.get('error'), 'consent_required');
  assert.equal(back.searchParams.get('state'), beyond.state);
  assert.equal(back.searchParams.get('code'), null);
});

test('prompt=none without a session → login_required at the client', async () => {
  const a = authorizeUrl(publicClient, { extra: { prompt: 'none' } });
  const r = await new Browser().follow(a.url);
  const back = new URL(r.location);
  assert.equal(back.searchParams.get('error'), 'login_required');
  assert.equal(back.searchParams.get('state'), a.state);
});

test('client and redirect_uri errors render a 400 page and never redirect', async () => {
  const cases = [
    authorizeUrl({ client_id: 'dcr_unknown' }).url,
    authorizeUrl(publicClient, { redirect: 'https://evil.example/cb' }).url,
    authorizeUrl(publicClient, { redirect: 'http://127.0.0.1:3000/other' }).url,
    authorizeUrl(publicClient, { redirect: 'http://localhost:3000/callback' }).url,
    authorizeUrl(publicClient, { redirect: 'https://127.0.0.1:3000/callback' }).url,
  ];
  for (const url of cases) {
    const r = await new Browser().request(url);
    assert.equal(r.status, 400, url);
    assert.equal(r.location, undefined, `no redirect for ${url}`);
    assert.match(r.headers.get('content-type'), /text\/html/);
    assert.equal(r.headers.get('x-frame-options'), 'DENY');
  }
  // Loopback: any port matches a registered 127.0.0.1 redirect.
  const other = authorizeUrl(publicClient, { redirect: 'http://127.0.0.1:54321/callback' });
  const ok = await new Browser().request(other.url);
  assert.equal(ok.status, 303);
  assert.ok(ok.location.startsWith(baseUrl + '/oauth/login'));
});

test('parameter errors go back to the client with error, state and iss', async () => {
  const expect = async (opts, error) => {
    const a = authorizeUrl(publicClient, opts);
    const u = new URL(a.url);
    for (const [k, v] of Object.entries(opts.remove ?? {})) if (v) u.searchParams.delete(k);
    const r = await new Browser().request(u.href);
    assert.equal(r.status, 303, `${error}: ${r.status} ${r.html.slice(0, 200)}`);
    const back = new URL(r.location);
    assert.ok(r.location.startsWith(REDIRECT));
    assert.equal(back.searchParams.get('error'), error, r.location);
    assert.equal(back.searchParams.get('state'), a.state);
    assert.equal(back.searchParams.get('iss'), `${baseUrl}/resources/${R1.id}`);
  };
  await expect({ remove: { code_challenge: true } }, 'invalid_request');
  await expect({ remove: { code_challenge_method: true } }, 'invalid_request');
  await expect({ extra: { code_challenge_method: 'plain' } }, 'invalid_request');
  await expect({ extra: { response_type: 'token' } }, 'unsupported_response_type');
  await expect({ scope: 'todo:read admin:all' }, 'invalid_scope');
  await expect({ resource: R2.server_url }, 'invalid_target');
  await expect({ resource: 'https://nowhere.test/mcp' }, 'invalid_target');
  await expect({ extra: { prompt: 'bogus' } }, 'invalid_request');
});

test('resource: omitted defaults to the client\'s; case and one trailing slash are tolerated', async () => {
  const upper = R1.server_url.replace('https://', 'HTTPS://').replace('.test', '.TEST') + '/';
  const a = await authorizeInteractively(publicClient, { resource: upper, scope: 'todo:read' });
  const t = await exchange(publicClient, a.code, a.verifier);
  assert.equal(decodeJwt(t.json.access_token).aud, R1.server_url);
});

test('code exchange: PKCE, binding and replay', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  // wrong verifier, missing verifier, malformed verifier
  assertOAuthError(assert, await exchange(publicClient, a.code, verifierOf()), 400, 'invalid_grant');
  assertOAuthError(assert, await exchange(publicClient, a.code, ''), 400, 'invalid_request');
  assertOAuthError(assert, await exchange(publicClient, a.code, 'short!'), 400, 'invalid_request');
  // another redirect_uri, another client, another resource
  assertOAuthError(assert, await exchange(publicClient, a.code, a.verifier, { redirect_uri: 'http://127.0.0.1:3000/other' }), 400, 'invalid_grant');
  assertOAuthError(assert, await exchange(publicClient, a.code, a.verifier, { resource: R2.server_url }), 400, 'invalid_target');
  const other = await register(R1, { client_name: 'Other', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_uri: `https://${uniq()}.example` });
  assertOAuthError(assert, await exchange(other, a.code, a.verifier), 400, 'invalid_grant');
  // the rightful exchange still works (failed attempts did not burn the code)...
  const t = await exchange(publicClient, a.code, a.verifier);
  assert.equal(t.status, 200, t.text);
  // ...and a replay fails AND revokes what the first exchange issued
  assertOAuthError(assert, await exchange(publicClient, a.code, a.verifier), 400, 'invalid_grant');
  assert.deepEqual((await introspect(t.json.access_token)).json, { active: false });
  assertOAuthError(assert, await refresh(publicClient, t.json.refresh_token), 400, 'invalid_grant');
  assertOAuthError(assert, await exchange(publicClient, 'not-a-code', a.verifier), 400, 'invalid_grant');
});

test('code exchange: the code is sealed and stored nowhere; an altered code, or one sealed under another key, is unknown', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  // A few hundred base64url characters (docs/oauth.md, "The code"), and no row anywhere.
  assert.match(a.code, /^[A-Za-z0-9_-]+$/);
  assert.ok(a.code.length < 400, `${a.code.length} characters`);
  const hash = createHash('sha256').update(a.code).digest('hex');
  assert.deepEqual(dbQuery(`SELECT COUNT(*) FROM authorization_codes WHERE code_hash = UNHEX('${hash}')`), [['0']]);
  // What it carries: the binding of the request, a 60 s expiry and the grant it will create.
  const sealed = openCode(a.code);
  assert.ok(sealed, 'the code opens with the stack\'s master key');
  assert.deepEqual(sealed.client_digest, bindingDigest(publicClient.client_id));
  assert.deepEqual(sealed.redirect_uri_digest, bindingDigest(REDIRECT));
  assert.equal(sealed.resource_id, R1.id);
  assert.equal(sealed.scope, 'todo:read');
  assert.equal(sealed.code_challenge, challengeOf(a.verifier));
  assert.equal(sealed.dpop_jkt, '');
  const now = Math.floor(Date.now() / 1000);
  assert.ok(sealed.expires_at > now && sealed.expires_at <= now + 61, `${sealed.expires_at} vs ${now}`);
  assert.match(sealed.grant_id, /^grt_[0-9a-z]{26}$/);
  // Any altered character, a code sealed under another master key, a truncated one, garbage:
  // the same answer as an unknown code, and none of them uses up the real one.
  const unknown = await exchange(publicClient, 'not-a-code', a.verifier);
  assertOAuthError(assert, unknown, 400, 'invalid_grant');
  const middle = Math.floor(a.code.length / 2);
  const altered = a.code.slice(0, middle) + (a.code[middle] === 'A' ? 'B' : 'A') + a.code.slice(middle + 1);
  const foreign = sealCode(sealed, randomBytes(32));
  for (const code of [altered, foreign, a.code.slice(0, -4), a.code + 'AAAA', 'A'.repeat(5000)]) {
    const r = await exchange(publicClient, code, a.verifier);
    assertOAuthError(assert, r, 400, 'invalid_grant');
    assert.equal(r.json.error_description, unknown.json.error_description);
  }
  const t = await exchange(publicClient, a.code, a.verifier);
  assert.equal(t.status, 200, t.text);
  // The grant is the one the code named; its user is the code's.
  const { sub, jti } = decodeJwt(t.json.access_token);
  assert.equal(jti.split('.')[0], sealed.grant_id);
  assert.equal(sub, sealed.user_id);
});

test('code exchange: a code past its expiry, for another client, or whose user or resource is gone is invalid_grant; a used one revokes even past its expiry', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const sealed = openCode(a.code);
  const now = Math.floor(Date.now() / 1000);
  const variant = (fields) => sealCode({ ...sealed, grant_id: `grt_${'0'.repeat(10)}${randomBytes(8).toString('hex')}`, ...fields });
  const refused = async (code, what) => {
    const r = await exchange(publicClient, code, a.verifier);
    assertOAuthError(assert, r, 400, 'invalid_grant');
    assert.equal(r.json.access_token, undefined, what);
  };
  await refused(variant({ expires_at: now - 1 }), 'expired');
  await refused(variant({ client_digest: bindingDigest(confidentialClient.client_id) }), 'another client');
  await refused(variant({ redirect_uri_digest: bindingDigest('http://127.0.0.1:3000/other') }), 'another redirect_uri');
  await refused(variant({ user_id: `usr_${'0'.repeat(26)}` }), 'no such user');
  await refused(variant({ resource_id: `res_${'0'.repeat(26)}` }), 'no such resource');
  await refused(variant({ dpop_jkt: createHash('sha256').update('a key').digest('base64url') }), 'DPoP-bound, no proof');
  // The code itself still works, once; the same grant presented again past the code's expiry
  // (a late replay) still revokes what it gave.
  const t = await exchange(publicClient, a.code, a.verifier);
  assert.equal(t.status, 200, t.text);
  const late = sealCode({ ...sealed, expires_at: now - 120 });
  assertOAuthError(assert, await exchange(publicClient, late, a.verifier), 400, 'invalid_grant');
  assert.deepEqual((await introspect(t.json.access_token)).json, { active: false });
});

test('code exchange: one code presented at once several times wins at most once, and the replay revokes it', async () => {
  for (let round = 0; round < 3; round++) {
    const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
    const answers = await Promise.all(Array.from({ length: 4 }, () => exchange(publicClient, a.code, a.verifier)));
    const won = answers.filter((r) => r.status === 200);
    assert.ok(won.length <= 1, `${won.length} exchanges of one code succeeded`);
    for (const r of answers.filter((x) => x.status !== 200)) assertOAuthError(assert, r, 400, 'invalid_grant');
    // Every answer is in; whatever the winner got is revoked by the replays.
    for (const w of won) {
      assert.deepEqual((await introspect(w.json.access_token)).json, { active: false });
      assertOAuthError(assert, await refresh(publicClient, w.json.refresh_token), 400, 'invalid_grant');
    }
  }
});

test('code exchange: of concurrent exchanges of one code exactly one wins; its token.issued and the replays\' token.revoked (code_replay) are on record when the answers are in', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const answers = await Promise.all(Array.from({ length: 6 }, () => exchange(publicClient, a.code, a.verifier)));
  const won = answers.filter((r) => r.status === 200);
  assert.equal(won.length, 1, answers.map((r) => `${r.status} ${r.text}`).join('\n'));
  for (const r of answers.filter((x) => x.status !== 200)) assertOAuthError(assert, r, 400, 'invalid_grant');
  const { sub, jti } = decodeJwt(won[0].json.access_token);
  const grant = jti.split('.')[0];
  assert.match(grant, /^grt_/);
  // Written in the transactions of the exchange and of the replays' revocations: no waiting.
  const events = async (query) => {
    const r = await api('GET', `/api/v1/events?${query}&page_size=100`);
    assert.equal(r.status, 200, r.text);
    return r.json.events;
  };
  const issued = (await events(`types=token.issued&user_id=${sub}`)).filter((e) => e.data.grant_id === grant);
  assert.equal(issued.length, 1, JSON.stringify(issued));
  assert.equal(issued[0].client_id, publicClient.client_id);
  assert.equal(issued[0].resource_id, R1.id);
  assert.equal(issued[0].data.grant_type, 'authorization_code');
  assert.equal(issued[0].data.jti, jti);
  const revoked = (await events(`types=token.revoked&client_id=${encodeURIComponent(publicClient.client_id)}`))
    .filter((e) => e.data.grant_id === grant);
  assert.ok(revoked.length >= 1 && revoked.every((e) => e.data.reason === 'code_replay'), JSON.stringify(revoked));
  // The winner's tokens died with the replay.
  assert.deepEqual((await introspect(won[0].json.access_token)).json, { active: false });
  assertOAuthError(assert, await refresh(publicClient, won[0].json.refresh_token), 400, 'invalid_grant');
});

test('a signed-in browser\'s remembered consent is the user\'s for one client and one resource: another client asks again', async () => {
  const first = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const browser = first.browser;
  const sameResource = await register(R1, { client_name: 'Second App', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_uri: `https://${uniq()}.example` });
  const otherResource = await register(R2, { client_name: 'Third App', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_uri: `https://${uniq()}.example` });
  for (const client of [sameResource, otherResource]) {
    const page = await browser.follow(authorizeUrl(client, { scope: 'todo:read' }).url);
    assert.equal(page.location, undefined, `the consent page, not a redirect: ${page.location}`);
    assert.match(page.html, /decision/);
    const none = authorizeUrl(client, { scope: 'todo:read', extra: { prompt: 'none' } });
    const back = new URL((await browser.follow(none.url)).location);
    assert.equal(back.searchParams.get('error'), 'consent_required');
    assert.equal(back.searchParams.get('code'), null);
  }
  // The consented client still comes straight back with a code, for the signed-in user.
  const again = authorizeUrl(publicClient, { scope: 'todo:read' });
  const page = await browser.follow(again.url);
  const code = new URL(page.location).searchParams.get('code');
  assert.ok(code, page.location);
  const t = await exchange(publicClient, code, again.verifier);
  assert.equal(t.status, 200, t.text);
  const firstTokens = await exchange(publicClient, first.code, first.verifier);
  assert.equal(decodeJwt(t.json.access_token).sub, decodeJwt(firstTokens.json.access_token).sub);
});

test('refresh: rotation, reuse detection revokes the family, scope may only narrow', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read todo:write' });
  const t0 = (await exchange(publicClient, a.code, a.verifier)).json;
  const r1 = await refresh(publicClient, t0.refresh_token, { scope: 'todo:read' });
  assert.equal(r1.status, 200, r1.text);
  assert.equal(r1.json.scope, 'todo:read');
  assert.notEqual(r1.json.refresh_token, t0.refresh_token);
  assertOAuthError(assert, await refresh(publicClient, r1.json.refresh_token, { scope: 'todo:read admin' }), 400, 'invalid_scope');
  const other = await register(R1, { client_name: 'Thief', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_uri: `https://${uniq()}.example` });
  assertOAuthError(assert, await refresh(other, r1.json.refresh_token), 400, 'invalid_grant');
  const r2 = await refresh(publicClient, r1.json.refresh_token);
  assert.equal(r2.status, 200, r2.text);
  // reuse of a rotated-out token: refused, and the live one dies with it
  assertOAuthError(assert, await refresh(publicClient, t0.refresh_token), 400, 'invalid_grant');
  assertOAuthError(assert, await refresh(publicClient, r2.json.refresh_token), 400, 'invalid_grant');
  assert.deepEqual((await introspect(r2.json.access_token)).json, { active: false });
});

// A sealed refresh token (docs/oauth.md, "The refresh token") is stored nowhere: its grant's row
// holds the generation that is live.
const grantOf = (accessToken) => decodeJwt(accessToken).jti.split('.')[0];
const generationOf = (grantId) => Number(dbQuery(`SELECT refresh_generation FROM grants WHERE id = '${grantId}'`)[0][0]);
const revokedAt = (grantId) => dbQuery(`SELECT COALESCE(revoked_at, 'live') FROM grants WHERE id = '${grantId}'`)[0][0];

test('refresh: a sealed token moves its grant\'s generation; a forged or altered one is invalid_grant and revokes nothing', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const t0 = (await exchange(publicClient, a.code, a.verifier)).json;
  const grant = grantOf(t0.access_token);
  assert.equal(generationOf(grant), 0);
  assert.equal(dbQuery(`SELECT COUNT(*) FROM refresh_tokens WHERE grant_id = '${grant}'`)[0][0], '0');
  // Each character changed in turn (a sample of them), a truncation, another length, a stored
  // token's shape that names nothing: unknown, nothing revoked.
  const forged = [t0.refresh_token.slice(0, -1), t0.refresh_token + 'A', randomBytes(32).toString('base64url'), randomBytes(200).toString('base64url')];
  for (const i of [0, 5, 17, 40, Math.floor(t0.refresh_token.length / 2), t0.refresh_token.length - 1]) {
    const c = t0.refresh_token[i] === 'A' ? 'B' : 'A';
    forged.push(t0.refresh_token.slice(0, i) + c + t0.refresh_token.slice(i + 1));
  }
  for (const token of forged) {
    const r = await refresh(publicClient, token);
    assertOAuthError(assert, r, 400, 'invalid_grant');
    assert.equal(r.json.error_description, 'unknown refresh token');
  }
  assert.equal(revokedAt(grant), 'live');
  assert.equal(generationOf(grant), 0);
  const r1 = await refresh(publicClient, t0.refresh_token);
  assert.equal(r1.status, 200, r1.text);
  assert.equal(r1.json.scope, 'todo:read');
  assert.equal(grantOf(r1.json.access_token), grant);
  assert.equal(generationOf(grant), 1);
  assert.equal((await introspect(r1.json.refresh_token)).json.active, true);
  // The previous generation again: reuse, the grant is revoked with every token under it.
  const reused = await refresh(publicClient, t0.refresh_token);
  assertOAuthError(assert, reused, 400, 'invalid_grant');
  assert.match(reused.json.error_description, /already used/);
  assert.notEqual(revokedAt(grant), 'live');
  assert.deepEqual((await introspect(r1.json.refresh_token)).json, { active: false });
  assert.deepEqual((await introspect(r1.json.access_token)).json, { active: false });
  assertOAuthError(assert, await refresh(publicClient, r1.json.refresh_token), 400, 'invalid_grant');
});

test('refresh: of concurrent presentations of one sealed token exactly one wins, and the grant is revoked', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const t0 = (await exchange(publicClient, a.code, a.verifier)).json;
  const grant = grantOf(t0.access_token);
  const answers = await Promise.all(Array.from({ length: 6 }, () => refresh(publicClient, t0.refresh_token)));
  const won = answers.filter((r) => r.status === 200);
  assert.equal(won.length, 1, answers.map((r) => r.text).join('\n'));
  for (const r of answers.filter((r) => r.status !== 200)) assertOAuthError(assert, r, 400, 'invalid_grant');
  assert.equal(generationOf(grant), 1);
  assert.notEqual(revokedAt(grant), 'live');
  assert.deepEqual((await introspect(won[0].json.access_token)).json, { active: false });
  assertOAuthError(assert, await refresh(publicClient, won[0].json.refresh_token), 400, 'invalid_grant');
});

test('refresh: the rotation itself refuses a deactivated or removed user and an expired grant, with the read\'s answer', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const t0 = (await exchange(publicClient, a.code, a.verifier)).json;
  const grant = grantOf(t0.access_token);
  const user = decodeJwt(t0.access_token).sub;
  // Changed behind the service's back (no revocation): only the rotation's own checks see it.
  dbQuery(`UPDATE users SET active = FALSE WHERE id = '${user}'`);
  const inactive = await refresh(publicClient, t0.refresh_token);
  assertOAuthError(assert, inactive, 400, 'invalid_grant');
  assert.equal(inactive.json.error_description, 'the user is deactivated');
  assert.equal(generationOf(grant), 0);
  dbQuery(`UPDATE users SET active = TRUE WHERE id = '${user}'`);
  dbQuery(`UPDATE grants SET absolute_expires_at = UNIX_TIMESTAMP() - 1 WHERE id = '${grant}'`);
  const expired = await refresh(publicClient, t0.refresh_token);
  assertOAuthError(assert, expired, 400, 'invalid_grant');
  assert.equal(expired.json.error_description, 'the refresh token has expired');
  assert.equal(generationOf(grant), 0);
  dbQuery(`UPDATE grants SET absolute_expires_at = UNIX_TIMESTAMP() + 3600 WHERE id = '${grant}'`);
  // Neither refusal revoked anything: the same token still refreshes.
  const r1 = await refresh(publicClient, t0.refresh_token);
  assert.equal(r1.status, 200, r1.text);
  assert.equal(revokedAt(grant), 'live');
  // The user removed (its grants revoked, as the management API does): invalid_grant.
  assert.equal((await api('DELETE', `/api/v1/users/${user}`)).status, 204);
  assertOAuthError(assert, await refresh(publicClient, r1.json.refresh_token), 400, 'invalid_grant');
});

test('refresh: a stored refresh token of before sealed ones still refreshes, and its reuse revokes', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const t0 = (await exchange(publicClient, a.code, a.verifier)).json;
  const grant = grantOf(t0.access_token);
  const legacy = randomBytes(32).toString('base64url');
  dbQuery(`INSERT INTO refresh_tokens (token_hash, grant_id, create_time, expires_at) VALUES (UNHEX(SHA2('${legacy}', 256)), '${grant}', UTC_TIMESTAMP(6), UNIX_TIMESTAMP() + 3600)`);
  assert.equal((await introspect(legacy)).json.active, true);
  const r1 = await refresh(publicClient, legacy);
  assert.equal(r1.status, 200, r1.text);
  assert.equal(r1.json.refresh_token.length, legacy.length); // its successor is stored too
  const r2 = await refresh(publicClient, r1.json.refresh_token);
  assert.equal(r2.status, 200, r2.text);
  assertOAuthError(assert, await refresh(publicClient, legacy), 400, 'invalid_grant');
  assert.notEqual(revokedAt(grant), 'live');
  assert.deepEqual((await introspect(r2.json.access_token)).json, { active: false });
});

test('revocation and introspection of a sealed refresh token: a client revokes only its own grant', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const t0 = (await exchange(publicClient, a.code, a.verifier)).json;
  const grant = grantOf(t0.access_token);
  const r1 = (await refresh(publicClient, t0.refresh_token)).json;
  const live = (await introspect(r1.refresh_token)).json;
  assert.equal(live.active, true);
  assert.equal(live.client_id, publicClient.client_id);
  // The rotated-out generation introspects inactive; the grant stands.
  assert.deepEqual((await introspect(t0.refresh_token)).json, { active: false });
  const other = await register(R1, { client_name: 'Other3', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_uri: `https://${uniq()}.example` });
  assert.equal((await http('/oauth/revoke', { method: 'POST', form: { token: r1.refresh_token, client_id: other.client_id } })).status, 200);
  assert.equal(revokedAt(grant), 'live');
  assert.equal((await http('/oauth/revoke', { method: 'POST', form: { token: r1.refresh_token, client_id: publicClient.client_id } })).status, 200);
  assert.notEqual(revokedAt(grant), 'live');
  assert.deepEqual((await introspect(r1.refresh_token)).json, { active: false });
  assertOAuthError(assert, await refresh(publicClient, r1.refresh_token), 400, 'invalid_grant');
});

test('confidential clients must authenticate; grant types outside OAuth 2.1 are refused', async () => {
  const a = await authorizeInteractively(confidentialClient, { scope: 'todo:read' });
  const none = await http('/oauth/token', { method: 'POST', form: { grant_type: 'authorization_code', code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT, client_id: confidentialClient.client_id } });
  assertOAuthError(assert, none, 401, 'invalid_client');
  const wrong = await http('/oauth/token', { method: 'POST', form: { grant_type: 'authorization_code', code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT }, headers: { authorization: basic(confidentialClient.client_id, 'wrong') } });
  assertOAuthError(assert, wrong, 401, 'invalid_client');
  assert.match(wrong.headers.get('www-authenticate'), /^Basic/);
  const good = await exchange(confidentialClient, a.code, a.verifier, {}, 'basic');
  assert.equal(good.status, 200, good.text);
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', form: { grant_type: 'password', username: 'a', password: 'b', client_id: publicClient.client_id } }), 400, 'unsupported_grant_type');
});

test('code exchange: the client is authenticated before its code is looked at; a failed authentication leaves the code usable', async () => {
  const a = await authorizeInteractively(confidentialClient, { scope: 'todo:read' });
  const form = (extra = {}) => ({ grant_type: 'authorization_code', code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT, ...extra });
  const token = (body, headers = {}) => http('/oauth/token', { method: 'POST', form: body, headers });
  // A wrong secret is invalid_client whatever the code: with the right code, with an unknown one.
  for (const code of [a.code, 'not-a-code']) {
    const basicWrong = await token(form({ code }), { authorization: basic(confidentialClient.client_id, 'wrong') });
    assertOAuthError(assert, basicWrong, 401, 'invalid_client');
    assert.match(basicWrong.headers.get('www-authenticate'), /^Basic/);
    const postWrong = await token(form({ code, client_id: confidentialClient.client_id, client_secret: 'wrong' }));
    assertOAuthError(assert, postWrong, 401, 'invalid_client');
    assert.equal(postWrong.headers.get('www-authenticate'), null);
  }
  // A client that does not exist, well-formed or not, with the right code.
  for (const id of ['dcr_00000000000000000000000000', 'cli_00000000000000000000000000', 'no-such-client']) {
    assertOAuthError(assert, await token(form({ client_id: id })), 401, 'invalid_client');
    assertOAuthError(assert, await token(form(), { authorization: basic(id, confidentialClient.client_secret) }), 401, 'invalid_client');
  }
  // Another confidential client of the resource, properly authenticated: the code is not its own.
  const other = await register(R1, { client_name: `Other server ${uniq()}`, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' });
  const stolen = await token(form(), { authorization: basic(other.client_id, other.client_secret) });
  assertOAuthError(assert, stolen, 400, 'invalid_grant');
  assert.equal(stolen.json.access_token, undefined);
  // The rightful client with an unknown code: invalid_grant, not invalid_client.
  assertOAuthError(assert, await token(form({ code: 'not-a-code' }), { authorization: basic(confidentialClient.client_id, confidentialClient.client_secret) }), 400, 'invalid_grant');
  // None of the above burned the code.
  const good = await exchange(confidentialClient, a.code, a.verifier, {}, 'basic');
  assert.equal(good.status, 200, good.text);
  assert.equal((await introspect(good.json.access_token)).json.active, true);
  // Its replay by the other client is invalid_grant and revokes what the code gave.
  assertOAuthError(assert, await token(form(), { authorization: basic(other.client_id, other.client_secret) }), 400, 'invalid_grant');
  assert.deepEqual((await introspect(good.json.access_token)).json, { active: false });
});

test('code exchange: a deleted client\'s live code is refused with invalid_client', async () => {
  const client = await register(R1, { client_name: `Doomed ${uniq()}`, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' });
  const a = await authorizeInteractively(client, { scope: 'todo:read' });
  assert.equal((await api('DELETE', `/api/v1/resources/${R1.id}/clients/${client.client_id}`)).status, 204);
  const r = await http('/oauth/token', { method: 'POST', form: { grant_type: 'authorization_code', code: a.code, code_verifier: a.verifier, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret } });
  assertOAuthError(assert, r, 401, 'invalid_client');
});

test('code exchange decided without a read: with the workers\' copies of the client and resource warm, a user deactivated, a resource or the client deleted since the authorize get the read\'s answer; a refusal leaves the code usable; a replay revokes whatever else is wrong with it', async () => {
  const client = await register(R1, { client_name: `Warm ${uniq()}`, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' });
  const first = await authorizeInteractively(client, { scope: 'todo:read' });
  const post = (code, verifier) => http('/oauth/token', { method: 'POST', form: { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret } });
  // The signed-in browser with a remembered consent gets a code at once.
  const nextCode = async () => {
    const a = authorizeUrl(client, { scope: 'todo:read' });
    const page = await first.browser.follow(a.url);
    assert.ok(page.location?.startsWith(REDIRECT), `straight back to the client: ${page.status} ${page.html?.slice(0, 300)}`);
    return { code: new URL(page.location).searchParams.get('code'), verifier: a.verifier };
  };
  const t0 = await post(first.code, first.verifier);
  assert.equal(t0.status, 200, t0.text);
  const user = decodeJwt(t0.json.access_token).sub;
  // Several exchanges, so that the workers that serve the ones below most likely hold the client
  // and R1 (which worker takes a request is not the test's to choose; the answers are the same).
  for (let i = 0; i < 6; i++) {
    const c = await nextCode();
    const t = await post(c.code, c.verifier);
    assert.equal(t.status, 200, t.text);
  }
  // The user deactivated behind the service's back (nothing revoked): the exchange's write
  // refuses it, and the read answers.
  const d = await nextCode();
  dbQuery(`UPDATE users SET active = FALSE WHERE id = '${user}'`);
  const inactive = await post(d.code, d.verifier);
  assertOAuthError(assert, inactive, 400, 'invalid_grant');
  assert.equal(inactive.json.error_description, 'the user is deactivated');
  dbQuery(`UPDATE users SET active = TRUE WHERE id = '${user}'`);
  // The refusal did not use the code up.
  const good = await post(d.code, d.verifier);
  assert.equal(good.status, 200, good.text);
  // Its replay with a wrong verifier, or past its expiry: a replay first, so the grant dies.
  const wrong = await post(d.code, verifierOf());
  assertOAuthError(assert, wrong, 400, 'invalid_grant');
  assert.equal(wrong.json.error_description, 'the code was already used; tokens issued from it are revoked');
  assert.deepEqual((await introspect(good.json.access_token)).json, { active: false });
  const e = await nextCode();
  const kept = await post(e.code, e.verifier);
  assert.equal(kept.status, 200, kept.text);
  const late = sealCode({ ...openCode(e.code), expires_at: Math.floor(Date.now() / 1000) - 120 });
  const lateReplay = await post(late, e.verifier);
  assertOAuthError(assert, lateReplay, 400, 'invalid_grant');
  assert.equal(lateReplay.json.error_description, 'the code was already used; tokens issued from it are revoked');
  assert.deepEqual((await introspect(kept.json.access_token)).json, { active: false });
  // A resource deleted through the API after the workers held it: codes naming it (sealed by
  // the test with the stack's key, for this client) are refused as before.
  const doomed = await createResource('Doomed MCP', `https://mcp-doomed-${uniq()}.test/mcp`);
  const forDoomed = async () => {
    const c = await nextCode();
    return { code: sealCode({ ...openCode(c.code), resource_id: doomed.id }), verifier: c.verifier };
  };
  for (let i = 0; i < 6; i++) {
    const c = await forDoomed();
    const t = await post(c.code, c.verifier);
    assert.equal(t.status, 200, t.text);
    assert.equal(decodeJwt(t.json.access_token).aud, doomed.server_url);
  }
  const r = await forDoomed();
  assert.equal((await api('DELETE', `/api/v1/resources/${doomed.id}`)).status, 204);
  const noResource = await post(r.code, r.verifier);
  assertOAuthError(assert, noResource, 400, 'invalid_grant');
  assert.equal(noResource.json.error_description, 'the resource no longer exists');
  // The client deleted after the workers held it: invalid_client, as the store says.
  const c = await nextCode();
  assert.equal((await api('DELETE', `/api/v1/resources/${R1.id}/clients/${client.client_id}`)).status, 204);
  assertOAuthError(assert, await post(c.code, c.verifier), 401, 'invalid_client');
});

test('code exchange: a token request counts once against its client\'s rate limit, whether the exchange decided without a read or the read decided it; a failed authentication does not count', async () => {
  const client = await register(R1, { client_name: `Counted ${uniq()}`, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' });
  const a = await authorizeInteractively(client, { scope: 'todo:read' });
  const post = (code, verifier, secret = client.client_secret) => http('/oauth/token', { method: 'POST', form: { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: secret } });
  // The client's bucket (handlers/oauth/token_endpoint.cc), in one fixed minute: start early in one.
  const bucket = `token:${createHash('sha256').update(client.client_id).digest('base64url').slice(0, 32)}`;
  const hits = () => Number(dbQuery(`SELECT COALESCE(SUM(hits), 0) FROM rate_limit_counters WHERE bucket = '${bucket}'`)[0][0]);
  const second = new Date().getUTCSeconds();
  if (second > 45) await sleep((61 - second) * 1000);
  // Refused without a read, then by the read (a wrong verifier); a code that does not open.
  assertOAuthError(assert, await post(a.code, verifierOf()), 400, 'invalid_grant');
  assertOAuthError(assert, await post('not-a-code', a.verifier), 400, 'invalid_grant');
  // Decided without a read; its replay refused by the write, then revoked after the read.
  assert.equal((await post(a.code, a.verifier)).status, 200);
  assertOAuthError(assert, await post(a.code, a.verifier), 400, 'invalid_grant');
  assert.equal(hits(), 4);
  assertOAuthError(assert, await post(a.code, a.verifier, 'wrong'), 401, 'invalid_client');
  assert.equal(hits(), 4, 'a wrong secret is not counted against the client');
});

test('revocation (RFC 7009) and introspection (RFC 7662)', async () => {
  const a = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const t = (await exchange(publicClient, a.code, a.verifier)).json;
  // introspection needs a caller with tokens:introspect
  const anon = await http('/oauth/introspect', { method: 'POST', form: { token: t.access_token } });
  assert.equal(anon.status, 401);
  const narrow = await managementToken(undefined, undefined, 'users:read');
  const forbidden = await http('/oauth/introspect', { method: 'POST', form: { token: t.access_token }, headers: { authorization: `Bearer ${narrow}` } });
  assertOAuthError(assert, forbidden, 403, 'insufficient_scope');
  assert.equal((await introspect(t.access_token)).json.active, true);
  assert.equal((await introspect(t.refresh_token)).json.active, true);
  assert.deepEqual((await introspect('garbage')).json, { active: false });
  // another client cannot revoke it; unknown tokens answer 200
  const other = await register(R1, { client_name: 'Other2', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_uri: `https://${uniq()}.example` });
  assert.equal((await http('/oauth/revoke', { method: 'POST', form: { token: t.refresh_token, client_id: other.client_id } })).status, 200);
  assert.equal((await introspect(t.refresh_token)).json.active, true);
  assert.equal((await http('/oauth/revoke', { method: 'POST', form: { token: 'unknown', client_id: publicClient.client_id } })).status, 200);
  // the owner revokes the refresh token: the grant and its live access token die
  const rv = await http('/oauth/revoke', { method: 'POST', form: { token: t.refresh_token, token_type_hint: 'refresh_token', client_id: publicClient.client_id } });
  assert.equal(rv.status, 200);
  assert.deepEqual((await introspect(t.access_token)).json, { active: false });
  assertOAuthError(assert, await refresh(publicClient, t.refresh_token), 400, 'invalid_grant');
  // revoking a lone access token
  const b = await authorizeInteractively(publicClient, { scope: 'todo:read' });
  const t2 = (await exchange(publicClient, b.code, b.verifier)).json;
  await http('/oauth/revoke', { method: 'POST', form: { token: t2.access_token, client_id: publicClient.client_id } });
  assert.deepEqual((await introspect(t2.access_token)).json, { active: false });
  assert.equal((await introspect(t2.refresh_token)).json.active, true);
});
