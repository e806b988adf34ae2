// ES256 and EdDSA access tokens as a per-resource option (issue 16; docs/oauth.md, "Signing
// algorithms"): the resource's access_token_signing_alg in the management API, tokens from a real
// code flow and refresh that `jose` verifies against the published /keys, introspection, and the
// nginx auth_request validator accepting all three algorithms while refusing a token whose header
// alg is not its key's (alg confusion), "none" and HS256.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createRemoteJWKSet, jwtVerify, decodeProtectedHeader } from 'jose';
import { http, baseUrl, env, managementToken, assertProblem } from './harness.mjs';
import { Browser, completeAuthorization } from './browser.mjs';
import { startProtectedNginx, validateLocation, mintAccessToken } from './mcp-nginx.mjs';

const uniq = () => randomBytes(4).toString('hex');
const REDIRECT = 'http://127.0.0.1:3000/callback';
// The MCP server's own nginx (as validator.test.mjs, which has stopped its own by now).
const port = Number(env.PORTCULLIS_BASE_URL.split(':').pop()) + 7;
const mcpPath = `/mcp-algs-${uniq()}`;
let admin;
let nginx;
let upstream;
const byAlg = {};  // alg → resource (the ES256 and EdDSA ones protected by the nginx below)

async function createResource(json) {
  const r = await http('/api/v1/resources', {
    method: 'POST', headers: admin,
    json: { name: `Algs ${uniq()}`, server_url: `https://algs-${uniq()}.test/mcp`, scopes: [{ name: 'demo:read', description: 'Read' }], ...json },
  });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

before(async () => {
  admin = { authorization: `Bearer ${await managementToken()}` };
  byAlg.RS256 = await createResource({ server_url: `http://127.0.0.1:${port}${mcpPath}-rs` });
  byAlg.ES256 = await createResource({ server_url: `http://127.0.0.1:${port}${mcpPath}-es`, access_token_signing_alg: 'ES256' });
  byAlg.EdDSA = await createResource({ server_url: `http://127.0.0.1:${port}${mcpPath}-ed`, access_token_signing_alg: 'EdDSA' });
  upstream = createServer((req, res) => res.end(JSON.stringify({ sub: req.headers['x-portcullis-sub'] ?? null })));
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  // One nginx, one location per resource (an nginx server names one resource id: three servers
  // would need three ports, so each location sets its own).
  const locations = Object.entries(byAlg).map(([alg, r]) => {
    const suffix = { RS256: 'rs', ES256: 'es', EdDSA: 'ed' }[alg];
    return `${validateLocation(suffix, 'demo:read').replace('{', `{\n            set $portcullis_resource_id ${r.id};`)}
        location = ${mcpPath}-${suffix} {
            set $portcullis_resource_id ${r.id};
            auth_request /_portcullis/auth/${suffix};
            include portcullis/mcp-protect.conf;
            include portcullis/mcp-proxy-headers.conf;
            proxy_pass http://127.0.0.1:${upstream.address().port};
        }`;
  }).join('\n');
  nginx = await startProtectedNginx({ port, resourceId: byAlg.RS256.id, serverBody: locations, name: 'mcp-nginx-algs' });
});

after(async () => {
  nginx?.stop();
  await new Promise((r) => (upstream ? upstream.close(r) : r()));
});

const suffixOf = (alg) => ({ RS256: 'rs', ES256: 'es', EdDSA: 'ed' }[alg]);
async function callMcp(alg, token) {
  const res = await fetch(`${nginx.url}${mcpPath}-${suffixOf(alg)}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{}' });
  return { status: res.status, text: await res.text(), challenge: res.headers.get('www-authenticate') };
}

// authorize → sign-in → consent → code → tokens, for a public DCR client of `resource`.
async function codeFlow(resource) {
  const reg = await http(`/resources/${resource.id}/client_register`, {
    method: 'POST', json: { client_name: 'Algs', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] },
  });
  assert.equal(reg.status, 201, reg.text);
  const client = reg.json;
  const verifier = randomBytes(32).toString('base64url');
  const u = new URL(baseUrl + '/oauth/authorize');
  for (const [k, v] of Object.entries({
    response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, state: uniq(), scope: 'demo:read',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', resource: resource.server_url,
  })) u.searchParams.set(k, v);
  const page = await completeAuthorization(new Browser(), u.href, `algs-${uniq()}@example.com`);
  assert.ok(page.location?.startsWith(REDIRECT), `${page.status} ${page.location}`);
  const code = new URL(page.location).searchParams.get('code');
  const t = await http('/oauth/token', { method: 'POST', form: { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id } });
  assert.equal(t.status, 200, t.text);
  return { client, tokens: t.json };
}

test('access_token_signing_alg: RS256 by default, ES256 or EdDSA on request, anything else refused', async () => {
  const plain = await createResource({});
  assert.equal(plain.access_token_signing_alg, 'RS256');
  assert.equal(byAlg.ES256.access_token_signing_alg, 'ES256');
  assert.equal(byAlg.EdDSA.access_token_signing_alg, 'EdDSA');
  for (const bad of ['HS256', 'none', 'es256', 'ES384', 'PS256', 7, true]) {
    const r = await http('/api/v1/resources', { method: 'POST', headers: admin, json: { name: 'Bad', server_url: `https://bad-${uniq()}.test/mcp`, access_token_signing_alg: bad } });
    assertProblem(assert, r, 400, 'invalid_argument');
    assert.match(r.json.detail, /access_token_signing_alg/, r.text);
  }
  const patched = await http(`/api/v1/resources/${plain.id}`, { method: 'PATCH', headers: admin, json: { access_token_signing_alg: 'EdDSA' } });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json.access_token_signing_alg, 'EdDSA');
  assert.equal((await http(`/api/v1/resources/${plain.id}`, { headers: admin })).json.access_token_signing_alg, 'EdDSA');
  const reset = await http(`/api/v1/resources/${plain.id}`, { method: 'PATCH', headers: admin, json: { access_token_signing_alg: null } });
  assert.equal(reset.json.access_token_signing_alg, 'RS256');
});

for (const [alg, kty, crv] of [['ES256', 'EC', 'P-256'], ['EdDSA', 'OKP', 'Ed25519']]) {
  test(`${alg}: a code flow and a refresh give ${alg} tokens that jose verifies against /keys, and the validator accepts`, async () => {
    const resource = byAlg[alg];
    const issuer = `${baseUrl}/resources/${resource.id}`;
    const jwks = createRemoteJWKSet(new URL(baseUrl + '/keys'));
    const { client, tokens } = await codeFlow(resource);
    const first = await jwtVerify(tokens.access_token, jwks, { issuer, audience: resource.server_url, typ: 'at+jwt', algorithms: [alg] });
    assert.equal(first.protectedHeader.alg, alg);
    assert.equal(first.payload.scope, 'demo:read');
    assert.equal(first.payload.client_id, client.client_id);
    // The kid names a published key of that algorithm and curve.
    const published = (await http('/keys')).json.keys.find((k) => k.kid === first.protectedHeader.kid);
    assert.deepEqual([published?.alg, published?.kty, published?.crv, published?.use], [alg, kty, crv, 'sig']);
    // jose refuses it as RS256: the algorithm is the key's, not a verifier's guess.
    await assert.rejects(jwtVerify(tokens.access_token, jwks, { algorithms: ['RS256'] }));

    const r = await http('/oauth/token', { method: 'POST', form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id } });
    assert.equal(r.status, 200, r.text);
    const second = await jwtVerify(r.json.access_token, jwks, { issuer, audience: resource.server_url, typ: 'at+jwt', algorithms: [alg] });
    assert.equal(second.protectedHeader.alg, alg);
    assert.equal(second.payload.sub, first.payload.sub);
    assert.notEqual(second.payload.jti, first.payload.jti);

    const intro = await http('/oauth/introspect', { method: 'POST', form: { token: r.json.access_token }, headers: admin });
    assert.equal(intro.json.active, true, intro.text);
    assert.equal(intro.json.sub, first.payload.sub);

    // The nginx auth_request validator: the real token passes with its identity.
    const ok = await callMcp(alg, r.json.access_token);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(JSON.parse(ok.text).sub, first.payload.sub);
    // Another resource's token (RS256, valid signature) is still refused here.
    assert.equal((await callMcp(alg, await mintAccessToken(byAlg.RS256))).status, 401);
    // Revoking the refresh token's grant reaches the live ES256/EdDSA access token too.
    await http('/oauth/revoke', { method: 'POST', form: { token: r.json.refresh_token, client_id: client.client_id } });
    assert.equal((await http('/oauth/introspect', { method: 'POST', form: { token: r.json.access_token }, headers: admin })).json.active, false);
  });
}

test('the validator refuses algorithm confusion: a header alg that is not its key\'s, none, HS256', async () => {
  const es = await mintAccessToken(byAlg.ES256, {}, { alg: 'ES256' });
  const ed = await mintAccessToken(byAlg.EdDSA, {}, { alg: 'EdDSA' });
  assert.equal((await callMcp('ES256', es)).status, 200, 'the minted ES256 token itself is valid');
  assert.equal((await callMcp('EdDSA', ed)).status, 200, 'the minted EdDSA token itself is valid');
  const [esHeader, esClaims, esSig] = es.split('.');
  const header = decodeProtectedHeader(es);
  const withHeader = (h, sig = esSig) => `${Buffer.from(JSON.stringify(h)).toString('base64url')}.${esClaims}.${sig}`;
  const forged = [
    ['RS256 header on the ES256 key', withHeader({ ...header, alg: 'RS256' })],
    ['EdDSA header on the ES256 key', withHeader({ ...header, alg: 'EdDSA' })],
    ['alg none', withHeader({ ...header, alg: 'none' }, '')],
    ['alg none with a signature', withHeader({ ...header, alg: 'none' })],
    ['HS256 keyed with the published JWK', (() => {
      const h = Buffer.from(JSON.stringify({ ...header, alg: 'HS256' })).toString('base64url');
      return `${h}.${esClaims}.${createHmac('sha256', JSON.stringify(header)).update(`${h}.${esClaims}`).digest('base64url')}`;
    })()],
    ['the EdDSA signature under the ES256 header', `${esHeader}.${esClaims}.${ed.split('.')[2]}`],
  ];
  for (const [what, token] of forged) {
    const r = await callMcp('ES256', token);
    assert.equal(r.status, 401, `${what}: ${r.text}`);
    assert.match(r.challenge ?? '', /error="invalid_token"/, what);
    const intro = await http('/oauth/introspect', { method: 'POST', form: { token }, headers: admin });
    assert.deepEqual(intro.json, { active: false }, what);
  }
});
