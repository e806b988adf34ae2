// DPoP (RFC 9449) over the real stack: the token endpoint binds tokens to the client's key
// (token_type DPoP, cnf.jkt), refuses bad proofs with invalid_dpop_proof, binds public clients'
// refresh tokens, honours dpop_jkt at /oauth/authorize; resource servers behind nginx
// (auth_request validator) and the management API demand a fresh proof by the bound key; and a
// real DPoP client (oauth4webapi) completes a whole flow up to the protected MCP server. Proofs are made with `jose`, an implementation independent of ours.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, generateKeyPair, exportJWK, calculateJwkThumbprint, createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { createServer, request as httpRequest } from 'node:http';
import { http, baseUrl, basic, managementToken, assertOAuthError, assertNoNulls, env, sleep } from './harness.mjs';
import { startProtectedNginx, sqlRows, validateLocation } from './mcp-nginx.mjs';
import { Browser, completeAuthorization } from './browser.mjs';

const uniq = () => randomBytes(4).toString('hex');
const verifierOf = () => randomBytes(32).toString('base64url');
const challengeOf = (v) => createHash('sha256').update(v).digest('base64url');
const nowSeconds = () => Math.floor(Date.now() / 1000);
const tokenUrl = `${baseUrl}/oauth/token`;
const REDIRECT = 'http://127.0.0.1:3000/callback';

let admin;
let resource;
let publicClient;
let confidentialClient;

async function newKey(alg = 'ES256') {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { alg, publicKey, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

// A DPoP proof; every part can be overridden to make a bad one.
async function proof(key, { htm = 'POST', htu = tokenUrl, iat = nowSeconds(), jti = randomUUID(), ath, typ = 'dpop+jwt', jwk = key.jwk, signer = key } = {}) {
  const claims = { htm, htu, iat, jti };
  if (ath) claims.ath = ath;
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, typ, jwk }).sign(signer.privateKey);
}

export const athOf = (token) => createHash('sha256').update(token).digest('base64url');

async function tokenRequest(form, { dpop, headers = {} } = {}) {
  const h = { ...headers };
  if (dpop) h.dpop = dpop;
  return http('/oauth/token', { method: 'POST', form, headers: h });
}

async function clientCredentials(dpop) {
  return tokenRequest({ grant_type: 'client_credentials' }, { dpop, headers: { authorization: basic(env.PORTCULLIS_CLIENT_ID, env.PORTCULLIS_CLIENT_SECRET) } });
}

function authorizeUrl(client, extra = {}) {
  const verifier = verifierOf();
  const u = new URL(baseUrl + '/oauth/authorize');
  const params = { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, state: uniq(), code_challenge: challengeOf(verifier), code_challenge_method: 'S256', ...extra };
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return { url: u.href, verifier };
}

async function codeFor(client, extra = {}) {
  const a = authorizeUrl(client, extra);
  const page = await completeAuthorization(new Browser(), a.url, `dpop-${uniq()}@example.com`);
  assert.ok(page.location?.startsWith(REDIRECT), `redirected to the client: ${page.status} ${page.location}`);
  return { code: new URL(page.location).searchParams.get('code'), verifier: a.verifier };
}

async function exchange(client, { code, verifier }, dpop) {
  const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT };
  const headers = {};
  if (client.client_secret) headers.authorization = basic(client.client_id, client.client_secret);
  else form.client_id = client.client_id;
  return tokenRequest(form, { dpop, headers });
}

async function refresh(client, refreshToken, dpop) {
  const form = { grant_type: 'refresh_token', refresh_token: refreshToken };
  const headers = {};
  if (client.client_secret) headers.authorization = basic(client.client_id, client.client_secret);
  else form.client_id = client.client_id;
  return tokenRequest(form, { dpop, headers });
}

async function verifyAccessToken(token) {
  const jwks = createRemoteJWKSet(new URL(baseUrl + '/keys'));
  return (await jwtVerify(token, jwks, { issuer: `${baseUrl}/resources/${resource.id}`, audience: resource.server_url, typ: 'at+jwt' })).payload;
}

// The events recorded for a client, straight from the test stack's database.
function eventsOf(clientId) {
  return sqlRows(`SELECT type, data FROM events WHERE client_id = '${clientId.replace(/[^A-Za-z0-9_]/g, '')}'`)
    .map(([type, data]) => ({ type, data: JSON.parse(data) }));
}

async function introspect(token) {
  return http('/oauth/introspect', { method: 'POST', form: { token }, headers: admin });
}

before(async () => {
  admin = { authorization: `Bearer ${await managementToken()}` };
  const r = await http('/api/v1/resources', {
    method: 'POST',
    headers: admin,
    json: { name: 'DPoP MCP', server_url: `https://dpop-${uniq()}.test/mcp`, scopes: [{ name: 'notes:read', description: 'Read notes' }] },
  });
  assert.equal(r.status, 201, r.text);
  resource = r.json;
  const register = async (body) => {
    const res = await http(`/resources/${resource.id}/client_register`, { method: 'POST', json: body });
    assert.equal(res.status, 201, res.text);
    return res.json;
  };
  publicClient = await register({ client_name: 'DPoP public', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });
  confidentialClient = await register({ client_name: 'DPoP confidential', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' });
});

test('metadata advertises the DPoP algorithms, for the environment and per resource', async () => {
  for (const path of ['/.well-known/oauth-authorization-server', `/.well-known/oauth-authorization-server/resources/${resource.id}`, `/resources/${resource.id}/.well-known/openid-configuration`]) {
    const m = await http(path);
    assert.equal(m.status, 200, m.text);
    assert.deepEqual(m.json.dpop_signing_alg_values_supported, ['ES256', 'RS256', 'EdDSA'], path);
  }
});

test('public client: the code exchange with a proof issues a DPoP token bound to the key, and the refresh token too', async () => {
  const key = await newKey('ES256');
  const t = await exchange(publicClient, await codeFor(publicClient), await proof(key));
  assert.equal(t.status, 200, t.text);
  assert.equal(t.json.token_type, 'DPoP');
  assert.equal(t.headers.get('cache-control'), 'no-store');
  assertNoNulls(assert, t.json);
  const claims = await verifyAccessToken(t.json.access_token);
  assert.deepEqual(claims.cnf, { jkt: key.jkt });

  const intro = await introspect(t.json.access_token);
  assert.equal(intro.json.active, true);
  assert.equal(intro.json.token_type, 'DPoP');
  assert.deepEqual(intro.json.cnf, { jkt: key.jkt });

  // The refresh token is bound: no proof, or a proof by another key, gets invalid_grant.
  assertOAuthError(assert, await refresh(publicClient, t.json.refresh_token), 400, 'invalid_grant');
  assertOAuthError(assert, await refresh(publicClient, t.json.refresh_token, await proof(await newKey('ES256'))), 400, 'invalid_grant');
  assertOAuthError(assert, await refresh(publicClient, t.json.refresh_token, await proof(await newKey('RS256'))), 400, 'invalid_grant');
  // Those failures did not consume it: the right key refreshes, and the new tokens stay bound.
  const r = await refresh(publicClient, t.json.refresh_token, await proof(key));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.token_type, 'DPoP');
  assert.deepEqual((await verifyAccessToken(r.json.access_token)).cnf, { jkt: key.jkt });
  assertOAuthError(assert, await refresh(publicClient, r.json.refresh_token), 400, 'invalid_grant');
  const again = await refresh(publicClient, r.json.refresh_token, await proof(key));
  assert.equal(again.status, 200, again.text);

  // The issuance events say the tokens are bound (read from the store: events are written
  // after the response, and the events API is not part of this stack yet).
  await sleep(200);
  const events = eventsOf(publicClient.client_id);
  const issued = events.find((e) => e.type === 'token.issued' && e.data.dpop_jkt === key.jkt);
  assert.ok(issued, JSON.stringify(events));
  assert.equal(issued.data.token_type, 'DPoP');
  assert.equal(issued.data.refresh_token_dpop_bound, true);
  assert.ok(events.some((e) => e.type === 'token.refreshed' && e.data.token_type === 'DPoP' && e.data.dpop_jkt === key.jkt));
});

test('EdDSA and RS256 keys are accepted too', async () => {
  for (const alg of ['EdDSA', 'RS256']) {
    const key = await newKey(alg);
    const t = await clientCredentials(await proof(key));
    assert.equal(t.status, 200, `${alg}: ${t.text}`);
    assert.equal(t.json.token_type, 'DPoP');
  }
});

test('without a proof, tokens stay Bearer; a public client\'s refresh token then needs none', async () => {
  const t = await exchange(publicClient, await codeFor(publicClient));
  assert.equal(t.status, 200, t.text);
  assert.equal(t.json.token_type, 'Bearer');
  const claims = await verifyAccessToken(t.json.access_token);
  assert.equal(claims.cnf, undefined);
  assert.equal((await introspect(t.json.access_token)).json.token_type, 'Bearer');
  const r = await refresh(publicClient, t.json.refresh_token);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.token_type, 'Bearer');
});

test('confidential client: the refresh token stays unbound, each access token is bound to the proof sent with it', async () => {
  const key = await newKey();
  const t = await exchange(confidentialClient, await codeFor(confidentialClient), await proof(key));
  assert.equal(t.status, 200, t.text);
  assert.equal(t.json.token_type, 'DPoP');
  const plain = await refresh(confidentialClient, t.json.refresh_token);
  assert.equal(plain.status, 200, plain.text);
  assert.equal(plain.json.token_type, 'Bearer');
  const other = await newKey();
  const bound = await refresh(confidentialClient, plain.json.refresh_token, await proof(other));
  assert.equal(bound.status, 200, bound.text);
  assert.equal(bound.json.token_type, 'DPoP');
  assert.deepEqual((await verifyAccessToken(bound.json.access_token)).cnf, { jkt: other.jkt });
});

test('dpop_jkt at /oauth/authorize binds the code to that key (RFC 9449 §10)', async () => {
  const key = await newKey();
  const code = await codeFor(publicClient, { dpop_jkt: key.jkt });
  assertOAuthError(assert, await exchange(publicClient, code), 400, 'invalid_grant');
  assertOAuthError(assert, await exchange(publicClient, code, await proof(await newKey())), 400, 'invalid_grant');
  const t = await exchange(publicClient, code, await proof(key));
  assert.equal(t.status, 200, t.text);
  assert.deepEqual((await verifyAccessToken(t.json.access_token)).cnf, { jkt: key.jkt });
  // A malformed thumbprint goes back to the client as invalid_request.
  const a = authorizeUrl(publicClient, { dpop_jkt: 'not-a-thumbprint' });
  const page = await new Browser().follow(a.url);
  assert.equal(new URL(page.location).searchParams.get('error'), 'invalid_request');
});

test('bad proofs get 400 invalid_dpop_proof', async () => {
  const key = await newKey();
  const other = await newKey();
  const privateJwk = await exportJWK(key.privateKey);
  const cases = {
    'wrong htm': await proof(key, { htm: 'GET' }),
    'wrong htu': await proof(key, { htu: `${baseUrl}/oauth/revoke` }),
    'htu of another host': await proof(key, { htu: 'https://evil.example/oauth/token' }),
    'iat two minutes old': await proof(key, { iat: nowSeconds() - 120 }),
    'iat two minutes ahead': await proof(key, { iat: nowSeconds() + 120 }),
    'private key in jwk': await proof(key, { jwk: privateJwk }),
    'typ JWT': await proof(key, { typ: 'JWT' }),
    'signed by another key': await proof(key, { signer: other }),
    'not a JWT': 'not-a-proof',
    'no jti': await new SignJWT({ htm: 'POST', htu: tokenUrl, iat: nowSeconds() }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }).sign(key.privateKey),
  };
  for (const [name, dpop] of Object.entries(cases)) {
    const r = await clientCredentials(dpop);
    assert.equal(r.status, 400, `${name}: ${r.text}`);
    assert.equal(r.json?.error, 'invalid_dpop_proof', `${name}: ${r.text}`);
  }
  // The same proof twice: the second is a replay (the jti cache is shared by every worker).
  const once = await proof(key);
  assert.equal((await clientCredentials(once)).status, 200);
  const replay = await clientCredentials(once);
  assertOAuthError(assert, replay, 400, 'invalid_dpop_proof');
  assert.match(replay.json.error_description, /already used/);
  // A query string on htu is ignored, and default ports and case are normalised.
  const spelled = await proof(key, { htu: tokenUrl.replace('http://', 'HTTP://') + '?x=1' });
  assert.equal((await clientCredentials(spelled)).status, 200);
});

test('oauth4webapi, a real DPoP client: discovery, authorization code with DPoP, refresh', async () => {
  const issuer = new URL(`${baseUrl}/resources/${resource.id}`);
  const options = { [oauth.allowInsecureRequests]: true };
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: 'oauth2' }));
  assert.ok(as.dpop_signing_alg_values_supported.includes('ES256'));
  const client = { client_id: publicClient.client_id };
  const keyPair = await oauth.generateKeyPair('ES256');
  const DPoP = oauth.DPoP(client, keyPair);

  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint);
  for (const [k, v] of Object.entries({ client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', resource: resource.server_url })) url.searchParams.set(k, v);
  const page = await completeAuthorization(new Browser(), url.href, `o4w-${uniq()}@example.com`);
  const params = oauth.validateAuthResponse(as, client, new URL(page.location), state);

  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, { ...options, DPoP });
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  assert.equal(tokens.token_type, 'dpop');
  const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
  assert.deepEqual((await verifyAccessToken(tokens.access_token)).cnf, { jkt });

  const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token, { ...options, DPoP }));
  assert.equal(refreshed.token_type, 'dpop');
  assert.deepEqual((await verifyAccessToken(refreshed.access_token)).cnf, { jkt });
});

test('the management API accepts a DPoP-bound token only with the DPoP scheme and a fresh proof', async () => {
  const key = await newKey();
  const t = await clientCredentials(await proof(key));
  assert.equal(t.status, 200, t.text);
  const token = t.json.access_token;
  const url = `${baseUrl}/api/v1/resources`;
  const get = (headers) => http('/api/v1/resources?page_size=1', { headers });
  const apiProof = (overrides = {}) => proof(key, { htm: 'GET', htu: url, ath: athOf(token), ...overrides });

  assert.equal((await get({ authorization: `Bearer ${token}` })).status, 401, 'a bound token sent as Bearer');
  assert.equal((await get({ authorization: `DPoP ${token}` })).status, 401, 'no proof');
  assert.equal((await get({ authorization: `DPoP ${token}`, dpop: await apiProof({ htu: `${baseUrl}/api/v1/users` }) })).status, 401, 'wrong htu');
  assert.equal((await get({ authorization: `DPoP ${token}`, dpop: await apiProof({ htm: 'POST' }) })).status, 401, 'wrong htm');
  assert.equal((await get({ authorization: `DPoP ${token}`, dpop: await apiProof({ ath: athOf('another token') }) })).status, 401, 'wrong ath');
  assert.equal((await get({ authorization: `DPoP ${token}`, dpop: await proof(await newKey(), { htm: 'GET', htu: url, ath: athOf(token) }) })).status, 401, 'another key');
  const good = await apiProof();
  const ok = await get({ authorization: `DPoP ${token}`, dpop: good });
  assert.equal(ok.status, 200, ok.text);
  assert.equal((await get({ authorization: `DPoP ${token}`, dpop: good })).status, 401, 'a replayed proof');
  // An unbound token is refused with the DPoP scheme, and still works as Bearer.
  const bearer = await managementToken();
  assert.equal((await get({ authorization: `DPoP ${bearer}`, dpop: await proof(key, { htm: 'GET', htu: url, ath: athOf(bearer) }) })).status, 401);
  assert.equal((await get({ authorization: `Bearer ${bearer}` })).status, 200);
});

// ---------------------------------------------------------------------------------------------
// At the resource: an MCP server behind its own nginx, protected by Portcullis' snippets.

const mcpPort = Number(env.PORTCULLIS_BASE_URL.split(':').pop()) + 9;
const mcpPath = `/mcp-dpop-${uniq()}`;
const mcpUrl = `http://127.0.0.1:${mcpPort}${mcpPath}`;
const prmUrl = `http://127.0.0.1:${mcpPort}/.well-known/oauth-protected-resource${mcpPath}`;
let mcpResource;
let mcpClient;
let mcpNginx;
let upstream;
const upstreamSaw = [];

before(async () => {
  const r = await http('/api/v1/resources', {
    method: 'POST',
    headers: { authorization: `Bearer ${await managementToken()}` },
    json: { name: 'DPoP-protected MCP', server_url: mcpUrl, scopes: [{ name: 'demo:read', description: 'Read' }] },
  });
  assert.equal(r.status, 201, r.text);
  mcpResource = r.json;
  const c = await http(`/resources/${mcpResource.id}/client_register`, { method: 'POST', json: { client_name: 'DPoP MCP client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } });
  assert.equal(c.status, 201, c.text);
  mcpClient = c.json;
  upstream = createServer((req, res) => {
    upstreamSaw.push(req.headers);
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  await new Promise((done) => upstream.listen(0, '127.0.0.1', done));
  mcpNginx = await startProtectedNginx({
    port: mcpPort, resourceId: mcpResource.id, name: `mcp-nginx-dpop-${mcpPort}`, serverBody: `${validateLocation('read', 'demo:read')}
        location ${mcpPath} {
            auth_request /_portcullis/auth/read;
            include portcullis/mcp-protect.conf;
            include portcullis/mcp-proxy-headers.conf;
            proxy_pass http://127.0.0.1:${upstream.address().port};
        }`,
  });
});

after(async () => {
  mcpNginx?.stop();
  await new Promise((done) => (upstream ? upstream.close(done) : done()));
});

async function callMcp({ authorization, dpop, method = 'POST', url = mcpUrl }) {
  const headers = { 'content-type': 'application/json' };
  if (authorization) headers.authorization = authorization;
  if (dpop) headers.dpop = dpop;
  const res = await fetch(url, { method, headers, body: method === 'POST' ? '{}' : undefined });
  return { status: res.status, challenge: res.headers.get('www-authenticate'), text: await res.text() };
}

function assertDpopChallenge(r, error, what) {
  assert.equal(r.status, 401, `${what}: ${r.text}`);
  assert.match(r.challenge ?? '', new RegExp(`^DPoP error="${error}", error_description="[^"]+", algs="ES256 RS256 EdDSA", resource_metadata="${prmUrl.replace(/[.]/g, '\\.')}"$`), what);
}

test('at the MCP server: a bound token needs the DPoP scheme and a fresh proof by its key for that request', async () => {
  const key = await newKey();
  const t = await exchange(mcpClient, await codeFor(mcpClient, { resource: mcpUrl }), await proof(key));
  assert.equal(t.status, 200, t.text);
  assert.equal(t.json.token_type, 'DPoP');
  const token = t.json.access_token;
  const mcpProof = (overrides = {}) => proof(key, { htm: 'POST', htu: mcpUrl, ath: athOf(token), ...overrides });
  const seenBefore = upstreamSaw.length;

  assertDpopChallenge(await callMcp({ authorization: `Bearer ${token}` }), 'invalid_token', 'a bound token sent as Bearer');
  assertDpopChallenge(await callMcp({ authorization: `Bearer ${token}`, dpop: await mcpProof() }), 'invalid_token', 'as Bearer even with a proof');
  assertDpopChallenge(await callMcp({ authorization: `DPoP ${token}` }), 'invalid_dpop_proof', 'no proof');
  assertDpopChallenge(await callMcp({ authorization: `DPoP ${token}`, dpop: await proof(await newKey(), { htm: 'POST', htu: mcpUrl, ath: athOf(token) }) }), 'invalid_dpop_proof', 'a proof for another key');
  assertDpopChallenge(await callMcp({ authorization: `DPoP ${token}`, dpop: await mcpProof({ htu: `http://127.0.0.1:${mcpPort}/elsewhere` }) }), 'invalid_dpop_proof', 'wrong htu');
  assertDpopChallenge(await callMcp({ authorization: `DPoP ${token}`, dpop: await mcpProof({ htm: 'GET' }) }), 'invalid_dpop_proof', 'wrong htm');
  assertDpopChallenge(await callMcp({ authorization: `DPoP ${token}`, dpop: await mcpProof({ iat: nowSeconds() - 120 }) }), 'invalid_dpop_proof', 'old iat');
  assertDpopChallenge(await callMcp({ authorization: `DPoP ${token}`, dpop: await mcpProof({ ath: athOf('another token') }) }), 'invalid_dpop_proof', 'wrong ath');
  assert.equal(upstreamSaw.length, seenBefore, 'nothing refused reached the MCP server');

  const good = await mcpProof();
  const ok = await callMcp({ authorization: `DPoP ${token}`, dpop: good });
  assert.equal(ok.status, 200, ok.text);
  assert.match(upstreamSaw.at(-1)['x-portcullis-sub'], /^usr_/);
  assertDpopChallenge(await callMcp({ authorization: `DPoP ${token}`, dpop: good }), 'invalid_dpop_proof', 'a replayed proof');
  // Each request carries its own proof; the query string is not part of htu.
  const again = await callMcp({ authorization: `DPoP ${token}`, dpop: await mcpProof(), url: `${mcpUrl}?session=1` });
  assert.equal(again.status, 200, again.text);
});

// A request with a Host header of the client's choosing (fetch does not let one be set).
function callMcpWithHost(host, { authorization, dpop }) {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1', port: mcpPort, path: mcpPath, method: 'POST',
      headers: { host, 'content-type': 'application/json', authorization, dpop },
    }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, challenge: res.headers['www-authenticate'], text }));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

test('at the MCP server: htu is the configured resource URL, never the client\'s Host header', async () => {
  const key = await newKey();
  const t = await exchange(mcpClient, await codeFor(mcpClient, { resource: mcpUrl }), await proof(key));
  assert.equal(t.status, 200, t.text);
  const token = t.json.access_token;
  const forged = 'evil.example:8443';
  const mcpProof = (htu) => proof(key, { htm: 'POST', htu, ath: athOf(token) });
  // A proof for the URL the forged Host names is refused ...
  const steered = await callMcpWithHost(forged, { authorization: `DPoP ${token}`, dpop: await mcpProof(`http://${forged}${mcpPath}`) });
  assertDpopChallenge(steered, 'invalid_dpop_proof', 'htu from the Host header');
  // ... and one for the configured URL is accepted whatever Host the request carried.
  const ok = await callMcpWithHost(forged, { authorization: `DPoP ${token}`, dpop: await mcpProof(mcpUrl) });
  assert.equal(ok.status, 200, ok.text);
});

test('at the MCP server: Bearer tokens are unaffected, and an unbound token sent as DPoP is refused', async () => {
  const t = await exchange(mcpClient, await codeFor(mcpClient, { resource: mcpUrl }));
  assert.equal(t.json.token_type, 'Bearer', t.text);
  const r = await callMcp({ authorization: `Bearer ${t.json.access_token}` });
  assert.equal(r.status, 200, r.text);
  const key = await newKey();
  assertDpopChallenge(await callMcp({ authorization: `DPoP ${t.json.access_token}`, dpop: await proof(key, { htu: mcpUrl, ath: athOf(t.json.access_token) }) }), 'invalid_token', 'an unbound token sent as DPoP');
});

test('oauth4webapi end to end: discovery from the MCP server\'s metadata, DPoP tokens, protected requests', async () => {
  const options = { [oauth.allowInsecureRequests]: true };
  // RFC 9728 → RFC 8414, as an MCP client discovers.
  const prm = await (await fetch(prmUrl)).json();
  const issuer = new URL(prm.authorization_servers[0]);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: 'oauth2' }));
  const client = { client_id: mcpClient.client_id };
  const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint);
  for (const [k, v] of Object.entries({ client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', resource: prm.resource })) url.searchParams.set(k, v);
  const page = await completeAuthorization(new Browser(), url.href, `o4w-mcp-${uniq()}@example.com`);
  const params = oauth.validateAuthResponse(as, client, new URL(page.location), state);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, { ...options, DPoP }));
  assert.equal(tokens.token_type, 'dpop');
  for (let i = 0; i < 2; i += 1) {
    const res = await oauth.protectedResourceRequest(tokens.access_token, 'POST', new URL(mcpUrl), new Headers({ 'content-type': 'application/json' }), '{}', { ...options, DPoP });
    assert.equal(res.status, 200, await res.text());
  }
});
