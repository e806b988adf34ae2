// The registry as clients and operators see it: resources through the management API, their
// discovery documents, dynamic client registration (checked with the official MCP SDK's own
// discovery, registration and schemas), pre-registered clients, and pruning through the CLI.
//
// Other test files register clients and resources at the same time, so every resource here
// gets a server URL of its own and listings are checked for order and membership, not for
// exact contents.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import nodeHttp from 'node:http';
import {
  discoverAuthorizationServerMetadata,
  registerClient,
} from '@modelcontextprotocol/sdk/client/auth.js';
import {
  OAuthClientInformationFullSchema,
  OAuthMetadataSchema,
  OAuthProtectedResourceMetadataSchema,
  OpenIdProviderDiscoveryMetadataSchema,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  http, baseUrl, basic, managementToken, cli, sleep, configFile,
  assertOAuthError, assertProblem, assertNoNulls,
} from './harness.mjs';
import { assertMatchesSpec } from './openapi.mjs';

// Every /api/v1 response of this file is also checked against docs/openapi.yaml.
async function apiHttp(pathname, options = {}) {
  const r = await http(pathname, options);
  assertMatchesSpec(options.method ?? 'GET', pathname, r);
  return r;
}

const RESOURCE_ID = /^res_[0-9a-hjkmnp-tv-z]{26}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const unique = () => randomBytes(6).toString('hex');
const uniqueUrl = () => `https://reg-${unique()}.example.test/mcp`;

let adminToken;
async function admin() {
  adminToken ??= await managementToken();
  return adminToken;
}

// A management API call with a Bearer token (the bootstrap client's unless given).
async function api(method, pathname, { token, json } = {}) {
  return apiHttp(pathname, {
    method,
    json,
    headers: { authorization: `Bearer ${token ?? (await admin())}` },
  });
}

async function createResource(fields = {}) {
  const r = await api('POST', '/api/v1/resources', {
    json: { name: 'Registry test', server_url: uniqueUrl(), ...fields },
  });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

// An API client holding only `scopes`, and a token for it.
async function tokenWithScopes(scopes) {
  const r = await api('POST', '/api/v1/clients', { json: { name: `registry-${unique()}`, scopes } });
  assert.equal(r.status, 201, r.text);
  return managementToken(r.json.client_id, r.json.client_secret);
}

const register = (resourceId, json) =>
  http(`/resources/${resourceId}/client_register`, { method: 'POST', json });

function setting(name, fallback) {
  const line = readFileSync(configFile, 'utf8').split('\n').find((l) => l.startsWith(`${name}=`));
  return line ? Number(line.slice(name.length + 1)) : fallback;
}

// A POST from another loopback address (127.0.0.x): rate limits count per source address,
// and every other test speaks from 127.0.0.1.
function postFrom(localAddress, pathname, body) {
  const url = new URL(baseUrl + pathname);
  return new Promise((resolve, reject) => {
    const req = nodeHttp.request(
      {
        host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress,
        agent: false, headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => { text += c; });
        res.on('end', () => {
          let json;
          try { json = JSON.parse(text); } catch { json = undefined; }
          resolve({ status: res.statusCode, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

// ------------------------------------------------------------------------------ resources

test('resources: create with defaults, read, update, delete', async () => {
  const url = uniqueUrl();
  const r = await api('POST', '/api/v1/resources', { json: { name: 'Todo', server_url: url } });
  assert.equal(r.status, 201, r.text);
  const created = r.json;
  assert.match(created.id, RESOURCE_ID);
  assert.equal(r.headers.get('location'), `${baseUrl}/api/v1/resources/${created.id}`);
  assert.deepEqual(
    { ...created, id: undefined, create_time: undefined, update_time: undefined },
    {
      id: undefined, create_time: undefined, update_time: undefined, name: 'Todo',
      server_url: url, dcr_enabled: true, cimd_enabled: true, access_token_ttl_seconds: 900,
      access_token_signing_alg: 'RS256', scopes: [],
    },
  );
  assert.match(created.create_time, RFC3339);
  assert.equal(created.update_time, created.create_time);
  assertNoNulls(assert, created);

  const got = await api('GET', `/api/v1/resources/${created.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.json, created);

  const patched = await api('PATCH', `/api/v1/resources/${created.id}`, {
    json: {
      dcr_enabled: false,
      scopes: [{ name: 'todo:read', description: 'Read your todos' }, { name: 'todo:write' }],
    },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json.dcr_enabled, false);
  assert.equal(patched.json.cimd_enabled, true);
  assert.equal(patched.json.name, 'Todo');
  assert.deepEqual(patched.json.scopes, [
    { name: 'todo:read', description: 'Read your todos' },
    { name: 'todo:write', description: '' },
  ]);
  assert.ok(patched.json.update_time >= created.create_time);
  // Merge-patch null: back to the default. The GET body itself can be sent back unchanged.
  const reset = await api('PATCH', `/api/v1/resources/${created.id}`, {
    json: { ...patched.json, dcr_enabled: null },
  });
  assert.equal(reset.status, 200, reset.text);
  assert.equal(reset.json.dcr_enabled, true);
  assert.equal(reset.json.scopes.length, 2);
  assertProblem(assert, await api('PATCH', `/api/v1/resources/${created.id}`, { json: { name: null } }), 400, 'invalid_argument');
  assertProblem(assert, await api('PATCH', '/api/v1/resources/res_00000000000000000000000000', { json: {} }), 404, 'not_found');

  const del = await api('DELETE', `/api/v1/resources/${created.id}`);
  assert.equal(del.status, 204);
  assertProblem(assert, await api('GET', `/api/v1/resources/${created.id}`), 404, 'not_found');
  assertProblem(assert, await api('DELETE', `/api/v1/resources/${created.id}`), 404, 'not_found');
  // Its server URL is free again.
  assert.equal((await api('POST', '/api/v1/resources', { json: { name: 'Again', server_url: url } })).status, 201);
});

test('resources: lifetimes outside 300..3600 carry warnings, outside 60..86400 are refused', async () => {
  for (const ttl of [60, 299, 3601, 86400]) {
    const r = await createResource({ access_token_ttl_seconds: ttl });
    assert.equal(r.access_token_ttl_seconds, ttl);
    assert.ok(Array.isArray(r.warnings) && r.warnings.length === 1, JSON.stringify(r));
    assert.equal(typeof r.warnings[0], 'string');
    const again = await api('GET', `/api/v1/resources/${r.id}`);
    assert.deepEqual(again.json.warnings, r.warnings);
  }
  for (const ttl of [300, 900, 3600]) {
    assert.equal((await createResource({ access_token_ttl_seconds: ttl })).warnings, undefined);
  }
  for (const ttl of [59, 86401, 0, -5, '900', 900.5, true]) {
    const r = await api('POST', '/api/v1/resources', {
      json: { name: 'x', server_url: uniqueUrl(), access_token_ttl_seconds: ttl },
    });
    assertProblem(assert, r, 400, 'invalid_argument');
  }
  // PATCH into a warning range and back out of it.
  const r = await createResource();
  const long = await api('PATCH', `/api/v1/resources/${r.id}`, { json: { access_token_ttl_seconds: 7200 } });
  assert.equal(long.json.warnings.length, 1);
  const back = await api('PATCH', `/api/v1/resources/${r.id}`, { json: { access_token_ttl_seconds: null } });
  assert.equal(back.json.access_token_ttl_seconds, 900);
  assert.equal(back.json.warnings, undefined);
});

test('resources: every field is validated', async () => {
  const host = `http://127.0.0.1:${20000 + Math.floor(Math.random() * 20000)}/mcp-${unique()}`;
  assert.equal((await createResource({ server_url: host })).server_url, host, 'loopback http is fine');
  const bad = [
    {},
    { name: 'x' },
    { server_url: uniqueUrl() },
    { name: '', server_url: uniqueUrl() },
    { name: 'n'.repeat(201), server_url: uniqueUrl() },
    { name: 'a\nb', server_url: uniqueUrl() },
    { name: 7, server_url: uniqueUrl() },
    { name: 'x', server_url: 'http://mcp.example.test/mcp' },
    { name: 'x', server_url: 'https://mcp.example.test/mcp#frag' },
    { name: 'x', server_url: 'https://mcp.example.test/mcp?x=1' },
    { name: 'x', server_url: 'ftp://mcp.example.test/' },
    { name: 'x', server_url: '/mcp' },
    { name: 'x', server_url: 'https://user@mcp.example.test/mcp' },
    { name: 'x', server_url: uniqueUrl(), dcr_enabled: 'yes' },
    { name: 'x', server_url: uniqueUrl(), dcr_enable: false },
    { name: 'x', server_url: uniqueUrl(), scopes: 'todo:read' },
    { name: 'x', server_url: uniqueUrl(), scopes: [{ name: 'todo read' }] },
    { name: 'x', server_url: uniqueUrl(), scopes: [{ name: '' }] },
    { name: 'x', server_url: uniqueUrl(), scopes: [{ description: 'no name' }] },
    { name: 'x', server_url: uniqueUrl(), scopes: [{ name: 'a' }, { name: 'a' }] },
    { name: 'x', server_url: uniqueUrl(), scopes: [{ name: 'a', extra: 1 }] },
    { name: 'x', server_url: uniqueUrl(), scopes: [{ name: 'a', description: 'd'.repeat(501) }] },
  ];
  for (const json of bad) {
    assertProblem(assert, await api('POST', '/api/v1/resources', { json }), 400, 'invalid_argument');
  }
  assertProblem(assert, await apiHttp('/api/v1/resources', {
    method: 'POST', body: 'not json',
    headers: { authorization: `Bearer ${await admin()}`, 'content-type': 'application/json' },
  }), 400, 'invalid_argument');
});

test('resources: one server URL, one resource (409 already_exists)', async () => {
  const host = `reg-${unique()}.example.test`;
  const first = await createResource({ server_url: `https://${host}/mcp` });
  for (const server_url of [`https://${host}/mcp`, `HTTPS://${host.toUpperCase()}/mcp/`]) {
    assertProblem(assert, await api('POST', '/api/v1/resources', { json: { name: 'dup', server_url } }), 409, 'already_exists');
  }
  // A different path is a different resource; moving it onto the first one conflicts.
  const second = await createResource({ server_url: `https://${host}/other` });
  const moved = await api('PATCH', `/api/v1/resources/${second.id}`, { json: { server_url: `https://${host}/mcp/` } });
  assertProblem(assert, moved, 409, 'already_exists');
  assert.equal((await api('GET', `/api/v1/resources/${second.id}`)).json.server_url, `https://${host}/other`);
  assert.equal((await api('GET', `/api/v1/resources/${first.id}`)).status, 200);
});

test('resources: management scopes are enforced', async () => {
  const r = await createResource();
  const reader = await tokenWithScopes(['resources:read']);
  assert.equal((await api('GET', '/api/v1/resources', { token: reader })).status, 200);
  assert.equal((await api('GET', `/api/v1/resources/${r.id}`, { token: reader })).status, 200);
  assert.equal((await api('GET', `/api/v1/resources/${r.id}/protected-resource-metadata`, { token: reader })).status, 200);
  assert.equal((await api('GET', `/api/v1/resources/${r.id}/clients`, { token: reader })).status, 200);
  for (const [method, path, json] of [
    ['POST', '/api/v1/resources', { name: 'x', server_url: uniqueUrl() }],
    ['PATCH', `/api/v1/resources/${r.id}`, { name: 'y' }],
    ['DELETE', `/api/v1/resources/${r.id}`],
    ['POST', `/api/v1/resources/${r.id}/clients`, { redirect_uris: ['https://a.example/cb'] }],
    ['DELETE', `/api/v1/resources/${r.id}/clients/cli_00000000000000000000000000`],
  ]) {
    assertProblem(assert, await api(method, path, { token: reader, json }), 403, 'permission_denied');
  }
  const other = await tokenWithScopes(['users:read']);
  assertProblem(assert, await api('GET', '/api/v1/resources', { token: other }), 403, 'permission_denied');
  const anonymous = await apiHttp('/api/v1/resources');
  assertProblem(assert, anonymous, 401, 'unauthenticated');
  assert.match(anonymous.headers.get('www-authenticate'), /^Bearer/);
  assert.equal((await api('GET', `/api/v1/resources/${r.id}`)).json.name, r.name, 'nothing changed');
});

test('resources: keyset paging forward and back with page_size 1; tampered tokens are refused', async () => {
  const mine = [];
  for (let i = 0; i < 3; i++) mine.push((await createResource({ name: `page ${i}` })).id);

  const walk = async (startToken, direction) => {
    const seen = [];
    let token = startToken;
    let last;
    for (let guard = 0; guard < 10000; guard++) {
      const r = await api('GET', `/api/v1/resources?page_size=1&page_token=${encodeURIComponent(token)}`);
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.resources.length <= 1);
      assert.ok(r.json.total_size >= 3);
      assertNoNulls(assert, r.json);
      seen.push(...r.json.resources);
      last = r.json;
      token = direction === 'forward' ? r.json.next_page_token : r.json.prev_page_token;
      if (token === '') break;
    }
    return { seen, last };
  };

  const first = await api('GET', '/api/v1/resources?page_size=1');
  assert.equal(first.json.prev_page_token, '');
  const forward = await walk('', 'forward');
  assert.equal(forward.last.next_page_token, '');
  assert.notEqual(forward.last.prev_page_token, '');
  const ids = forward.seen.map((r) => r.id);
  assert.equal(new Set(ids).size, ids.length, 'no row twice');
  const at = mine.map((id) => ids.indexOf(id));
  assert.ok(at.every((i) => i >= 0), 'every new resource is listed');
  assert.ok(at[0] < at[1] && at[1] < at[2], 'in creation order');
  for (let i = 1; i < forward.seen.length; i++) {
    assert.ok(forward.seen[i - 1].create_time <= forward.seen[i].create_time);
  }

  // Back from the last page to the first one.
  const backward = await walk(forward.last.prev_page_token, 'backward');
  assert.equal(backward.last.prev_page_token, '');
  const back = [...forward.last.resources, ...backward.seen].map((r) => r.id);
  assert.equal(new Set(back).size, back.length);
  const backAt = mine.map((id) => back.indexOf(id));
  assert.ok(backAt.every((i) => i >= 0));
  assert.ok(backAt[0] > backAt[1] && backAt[1] > backAt[2], 'newest first when walking back');
  assert.equal(back[1], ids[ids.length - 2], 'the page before the last one');

  // page_size rules.
  for (const size of ['0', '101', '-1', 'ten', '', '1.5', '5&page_size=5']) {
    assertProblem(assert, await api('GET', `/api/v1/resources?page_size=${size}`), 400, 'invalid_argument');
  }
  assert.equal((await api('GET', '/api/v1/resources?page_size=100')).status, 200);
  assert.ok((await api('GET', '/api/v1/resources')).json.resources.length <= 50);

  // Tampered, garbage and foreign tokens.
  const token = first.json.next_page_token;
  assert.notEqual(token, '');
  const mid = Math.floor(token.length / 2);
  const tampered = token.slice(0, mid) + (token[mid] === 'A' ? 'B' : 'A') + token.slice(mid + 1);
  for (const bad of [tampered, token.slice(0, -2), 'garbage', 'AAAA', token + 'A']) {
    assertProblem(assert, await api('GET', `/api/v1/resources?page_token=${encodeURIComponent(bad)}`), 400, 'invalid_argument');
  }
  const foreign = await api('GET', `/api/v1/resources/${mine[0]}/clients?page_token=${encodeURIComponent(token)}`);
  assertProblem(assert, foreign, 400, 'invalid_argument');
  // An empty token is the first page.
  const again = await api('GET', '/api/v1/resources?page_size=1&page_token=');
  assert.deepEqual(again.json.resources.map((r) => r.id), first.json.resources.map((r) => r.id));
});

// ------------------------------------------------------------------------------ discovery

const metadataPaths = (id) => ({
  oauth: [`/.well-known/oauth-authorization-server/resources/${id}`, `/resources/${id}/.well-known/oauth-authorization-server`],
  openid: [`/.well-known/openid-configuration/resources/${id}`, `/resources/${id}/.well-known/openid-configuration`],
});

async function documents(id) {
  const paths = metadataPaths(id);
  const out = {};
  for (const kind of ['oauth', 'openid']) {
    const [a, b] = await Promise.all(paths[kind].map((p) => http(p, { headers: { 'mcp-protocol-version': '2025-11-25' } })));
    for (const r of [a, b]) {
      assert.equal(r.status, 200, r.text);
      assert.match(r.headers.get('content-type'), /^application\/json/);
      assert.equal(r.headers.get('access-control-allow-origin'), '*');
      assertNoNulls(assert, r.json);
    }
    assert.equal(a.text, b.text, `${paths[kind][0]} and ${paths[kind][1]} differ`);
    out[kind] = a.json;
  }
  return out;
}

test('discovery: the four metadata URLs serve one exact document per resource', async () => {
  const r = await createResource({ scopes: [{ name: 'todo:read' }, { name: 'todo:write' }] });
  const issuer = `${baseUrl}/resources/${r.id}`;
  const { oauth, openid } = await documents(r.id);
  assert.deepEqual(oauth, {
    issuer,
    authorization_endpoint: `${baseUrl}/oauth/authorize`,
    token_endpoint: `${baseUrl}/oauth/token`,
    registration_endpoint: `${baseUrl}/resources/${r.id}/client_register`,
    jwks_uri: `${baseUrl}/keys`,
    revocation_endpoint: `${baseUrl}/oauth/revoke`,
    introspection_endpoint: `${baseUrl}/oauth/introspect`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    scopes_supported: ['todo:read', 'todo:write'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    dpop_signing_alg_values_supported: ['ES256', 'RS256', 'EdDSA'],
  });
  assert.deepEqual(openid, {
    ...oauth,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
  });
  // The MCP SDK's own schemas and discovery accept them, and find the issuer byte for byte.
  OAuthMetadataSchema.parse(oauth);
  OpenIdProviderDiscoveryMetadataSchema.parse(openid);
  const discovered = await discoverAuthorizationServerMetadata(new URL(issuer));
  assert.equal(discovered.issuer, issuer);

  // CORS preflight, as a browser-based MCP client sends it.
  for (const p of [...metadataPaths(r.id).oauth, ...metadataPaths(r.id).openid]) {
    const pre = await http(p, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'mcp-protocol-version' },
    });
    assert.equal(pre.status, 204, p);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.match(pre.headers.get('access-control-allow-headers'), /MCP-Protocol-Version/i);
  }

  // The switches shape the document at all four URLs at once, within the 3 s a worker's rendered
  // copy (1 s) and nginx's cache of it (2 s) may be served (docs/oauth.md).
  await api('PATCH', `/api/v1/resources/${r.id}`, { json: { dcr_enabled: false, cimd_enabled: false } });
  await sleep(3100);
  const off = await documents(r.id);
  for (const doc of [off.oauth, off.openid]) {
    assert.equal(doc.registration_endpoint, undefined);
    assert.equal(doc.client_id_metadata_document_supported, false);
    assert.equal(doc.issuer, issuer);
  }
  OAuthMetadataSchema.parse(off.oauth);
});

test('discovery: unknown resources are a 404 in the OAuth shape', async () => {
  const deleted = await createResource();
  await api('DELETE', `/api/v1/resources/${deleted.id}`);
  for (const id of ['res_00000000000000000000000000', deleted.id, 'nonsense', 'res_']) {
    for (const p of [...metadataPaths(id).oauth, ...metadataPaths(id).openid]) {
      assertOAuthError(assert, await http(p), 404);
    }
  }
});

test('protected resource metadata: the document the MCP server publishes', async () => {
  const r = await createResource({ scopes: [{ name: 'notes:read' }] });
  const prm = await api('GET', `/api/v1/resources/${r.id}/protected-resource-metadata`);
  assert.equal(prm.status, 200);
  assert.deepEqual(prm.json, {
    resource: r.server_url,
    authorization_servers: [`${baseUrl}/resources/${r.id}`],
    bearer_methods_supported: ['header'],
    scopes_supported: ['notes:read'],
  });
  OAuthProtectedResourceMetadataSchema.parse(prm.json);
  assertProblem(assert, await api('GET', '/api/v1/resources/res_00000000000000000000000000/protected-resource-metadata'), 404, 'not_found');
});

// ------------------------------------------------------------------------------ DCR

test('DCR: a public client registers through the MCP SDK', async () => {
  const r = await createResource({ scopes: [{ name: 'todo:read' }] });
  const issuer = new URL(`${baseUrl}/resources/${r.id}`);
  const metadata = await discoverAuthorizationServerMetadata(issuer);
  const clientMetadata = {
    client_name: 'SDK client',
    redirect_uris: ['http://localhost:3000/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  const info = await registerClient(issuer, { metadata, clientMetadata, scope: 'todo:read' });
  assert.match(info.client_id, /^dcr_[0-9a-hjkmnp-tv-z]{26}$/);
  assert.equal(info.client_secret, undefined);
  assert.equal(info.client_secret_expires_at, undefined);
  assert.deepEqual(info.redirect_uris, clientMetadata.redirect_uris);
  assert.equal(info.token_endpoint_auth_method, 'none');
  assert.equal(info.scope, 'todo:read');
  assert.equal(info.client_name, 'SDK client');
  assert.ok(Math.abs(info.client_id_issued_at - Date.now() / 1000) < 300);
});

test('DCR: confidential clients get a secret; defaults are applied and echoed', async () => {
  const r = await createResource();
  // mcp-auth §5 check 2, with client_secret_basic.
  const res = await register(r.id, {
    client_name: 'Confidential', redirect_uris: ['http://localhost:3000/callback'],
    token_endpoint_auth_method: 'client_secret_basic', grant_types: ['authorization_code', 'refresh_token'],
  });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.match(res.headers.get('content-type'), /^application\/json/);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  assertNoNulls(assert, res.json);
  assert.match(res.json.client_secret, /^[A-Za-z0-9_-]{43,}$/);
  assert.equal(res.json.client_secret_expires_at, 0);
  OAuthClientInformationFullSchema.parse(res.json);

  // Only redirect_uris: every default in the echo.
  const minimal = await register(r.id, { redirect_uris: ['https://app.example/cb'] });
  assert.equal(minimal.status, 201, minimal.text);
  const { client_id, client_secret, client_id_issued_at, ...echo } = minimal.json;
  assert.match(client_id, /^dcr_/);
  assert.ok(client_secret && client_id_issued_at);
  assert.deepEqual(echo, {
    redirect_uris: ['https://app.example/cb'],
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    client_secret_expires_at: 0,
  });

  // Every field, and unknown ones ignored.
  const full = {
    client_name: 'Full', redirect_uris: ['https://app.example/cb', 'com.example.app:/cb'],
    token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'],
    response_types: ['code'], client_uri: 'https://app.example', logo_uri: 'https://app.example/logo.png',
    tos_uri: 'https://app.example/tos', policy_uri: 'https://app.example/privacy',
    contacts: ['ops@app.example'], software_id: 'app', software_version: '1.0.0',
    application_type: 'native',
  };
  const all = await register(r.id, { ...full, jwks_uri: 'https://app.example/jwks', unknown: { x: 1 } });
  assert.equal(all.status, 201, all.text);
  for (const [k, v] of Object.entries(full)) assert.deepEqual(all.json[k], v, k);
  assert.equal(all.json.jwks_uri, undefined);
  assert.equal(all.json.unknown, undefined);
  OAuthClientInformationFullSchema.parse(all.json);

  // CORS preflight of the registration endpoint.
  const pre = await http(`/resources/${r.id}/client_register`, {
    method: 'OPTIONS',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), '*');
  assert.match(pre.headers.get('access-control-allow-headers'), /Content-Type/i);

  // The operator sees them, without secrets.
  const listed = await api('GET', `/api/v1/resources/${r.id}/clients`);
  const ids = listed.json.clients.map((c) => c.client_id);
  for (const c of [res.json, minimal.json, all.json]) assert.ok(ids.includes(c.client_id));
  assert.ok(listed.json.clients.every((c) => c.client_secret === undefined));
});

test('token endpoint: a resource client that authenticates is refused client_credentials with unauthorized_client', async () => {
  const r = await createResource();
  const reg = await register(r.id, {
    client_name: 'No machine tokens', redirect_uris: ['https://app.example/cb'],
    token_endpoint_auth_method: 'client_secret_basic',
  });
  assert.equal(reg.status, 201, reg.text);
  const { client_id: id, client_secret: secret } = reg.json;
  // RFC 6749 §5.2: the client is authenticated but may not use this grant (400, not 401).
  const viaBasic = await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials' }, headers: { authorization: basic(id, secret) } });
  assertOAuthError(assert, viaBasic, 400, 'unauthorized_client');
  assert.equal(viaBasic.headers.get('www-authenticate'), null);
  const viaPost = await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials', client_id: id, client_secret: secret } });
  assertOAuthError(assert, viaPost, 400, 'unauthorized_client');
  // A public client identified as it registered (no secret) is refused the same way.
  const pub = await register(r.id, { redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'none' });
  assert.equal(pub.status, 201, pub.text);
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials', client_id: pub.json.client_id } }), 400, 'unauthorized_client');
  // Failed authentication stays 401 invalid_client, with the Basic challenge.
  const wrong = await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials' }, headers: { authorization: basic(id, secret + 'x') } });
  assertOAuthError(assert, wrong, 401, 'invalid_client');
  assert.match(wrong.headers.get('www-authenticate'), /^Basic/);
  // A confidential client presenting no secret has not authenticated.
  assertOAuthError(assert, await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials', client_id: id } }), 401, 'invalid_client');
});

test('DCR: every rejection of mcp-auth §5 checks 2–3, and more', async () => {
  const r = await createResource({ scopes: [{ name: 'todo:read' }] });
  const cb = ['http://localhost:3000/callback'];
  const redirectErrors = [
    { redirect_uris: ['http://evil.test/cb'] },
    { redirect_uris: ['https://a.test/cb#x'] },
    { client_name: 'no redirect' },
    { redirect_uris: [] },
    { redirect_uris: 'https://a.test/cb' },
    { redirect_uris: ['https://*.a.test/cb'] },
    { redirect_uris: ['https://user@a.test/cb'] },
    { redirect_uris: ['javascript:alert(1)'] },
    { redirect_uris: ['data:text/html,hi'] },
    { redirect_uris: ['file:///etc/passwd'] },
    { redirect_uris: ['https://ok.test/cb', 'http://evil.test/cb'] },
  ];
  for (const json of redirectErrors) {
    assertOAuthError(assert, await register(r.id, json), 400, 'invalid_redirect_uri');
  }
  const metadataErrors = [
    { redirect_uris: cb, grant_types: ['implicit'] },
    { redirect_uris: cb, grant_types: ['refresh_token'] },
    { redirect_uris: cb, grant_types: ['authorization_code', 'client_credentials'] },
    { redirect_uris: cb, token_endpoint_auth_method: 'private_key_jwt' },
    { redirect_uris: cb, token_endpoint_auth_method: 'bogus' },
    { redirect_uris: cb, response_types: ['token'] },
    { redirect_uris: cb, scope: 'todo:read todo:admin' },
    { redirect_uris: cb, client_name: 42 },
    { redirect_uris: cb, logo_uri: 'http://app.example/logo.png' },
    { redirect_uris: cb, contacts: 'ops@app.example' },
    { redirect_uris: cb, application_type: 'desktop' },
    { redirect_uris: cb, client_name: 'x'.repeat(201) },
  ];
  for (const json of metadataErrors) {
    assertOAuthError(assert, await register(r.id, json), 400, 'invalid_client_metadata');
  }
  for (const body of ['not json', '[1,2]', '']) {
    const res = await http(`/resources/${r.id}/client_register`, {
      method: 'POST', body, headers: { 'content-type': 'application/json' },
    });
    assertOAuthError(assert, res, 400, 'invalid_client_metadata');
  }
  // Unknown resource, and DCR switched off.
  assertOAuthError(assert, await register('res_00000000000000000000000000', { redirect_uris: cb }), 404);
  await api('PATCH', `/api/v1/resources/${r.id}`, { json: { dcr_enabled: false } });
  assertOAuthError(assert, await register(r.id, { redirect_uris: cb }), 403, 'access_denied');
  // Nothing was registered by any of it.
  assert.equal((await api('GET', `/api/v1/resources/${r.id}/clients`)).json.total_size, 0);
});

test('DCR: identical public-client metadata returns the existing client', async () => {
  const r = await createResource();
  const other = await createResource();
  const pub = { client_name: 'Dedup', redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' };
  const a = await register(r.id, pub);
  const b = await register(r.id, pub);
  assert.equal(a.status, 201);
  assert.equal(b.status, 201);
  assert.equal(b.json.client_id, a.json.client_id);
  assert.deepEqual(b.json, a.json);
  assert.notEqual((await register(r.id, { ...pub, client_name: 'Other' })).json.client_id, a.json.client_id);
  assert.notEqual((await register(other.id, pub)).json.client_id, a.json.client_id);
  // Confidential registrations are never shared: each is how a client learns its secret.
  const conf = { ...pub, token_endpoint_auth_method: 'client_secret_basic' };
  const c1 = await register(r.id, conf);
  const c2 = await register(r.id, conf);
  assert.notEqual(c1.json.client_id, c2.json.client_id);
  assert.notEqual(c1.json.client_secret, c2.json.client_secret);
});

test('DCR: registrations are rate-limited per source address (429 with Retry-After)', async () => {
  const limit = setting('PORTCULLIS_RATE_LIMIT_DCR_PER_MINUTE', 30);
  assert.ok(limit > 0 && limit <= 500, `limit ${limit}`);
  const r = await createResource();
  const address = `127.0.0.${2 + Math.floor(Math.random() * 250)}`;
  // Identical public metadata: every accepted request returns the same client, nothing piles up.
  const body = { redirect_uris: ['http://localhost:9999/cb'], token_endpoint_auth_method: 'none' };
  let accepted = 0;
  let refused;
  // Fixed one-minute windows: within two of them, 2 × limit + 1 requests must meet the limit.
  for (let i = 0; i < 2 * limit + 2 && !refused; i++) {
    const res = await postFrom(address, `/resources/${r.id}/client_register`, body);
    if (res.status === 429) refused = res;
    else {
      assert.equal(res.status, 201, res.text);
      accepted++;
    }
  }
  assert.ok(refused, 'the limit was never reached');
  assert.ok(accepted >= limit, `${accepted} accepted before the first 429`);
  assert.match(refused.headers['content-type'], /^application\/json/);
  assert.equal(refused.json.error, 'temporarily_unavailable');
  const retry = Number(refused.headers['retry-after']);
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${refused.headers['retry-after']}`);
  // Another address is not affected.
  assert.equal((await register(r.id, body)).status, 201);
});

// ------------------------------------------------------------------------------ pre-registered

test('pre-registered clients: create, list, delete', async () => {
  const r = await createResource({ scopes: [{ name: 'todo:read' }] });
  const created = await api('POST', `/api/v1/resources/${r.id}/clients`, {
    json: { client_name: 'Shipped app', redirect_uris: ['https://shipped.example/cb'], scope: 'todo:read' },
  });
  assert.equal(created.status, 201, created.text);
  assert.match(created.json.client_id, /^cli_[0-9a-hjkmnp-tv-z]{26}$/);
  assert.match(created.json.client_secret, /^[A-Za-z0-9_-]{43,}$/);
  assert.equal(created.json.client_secret_expires_at, 0);
  assert.equal(created.json.token_endpoint_auth_method, 'client_secret_basic');
  assert.equal(created.json.scope, 'todo:read');
  assert.match(created.json.create_time, RFC3339);
  assertNoNulls(assert, created.json);
  OAuthClientInformationFullSchema.parse(created.json);

  const pub = await api('POST', `/api/v1/resources/${r.id}/clients`, {
    json: { redirect_uris: ['http://localhost:5000/cb'], token_endpoint_auth_method: 'none' },
  });
  assert.equal(pub.status, 201);
  assert.equal(pub.json.client_secret, undefined);
  const pub2 = await api('POST', `/api/v1/resources/${r.id}/clients`, {
    json: { redirect_uris: ['http://localhost:5000/cb'], token_endpoint_auth_method: 'none' },
  });
  assert.notEqual(pub2.json.client_id, pub.json.client_id, 'pre-registration never deduplicates');
  const dcr = await register(r.id, { redirect_uris: ['https://dcr.example/cb'] });

  const page1 = await api('GET', `/api/v1/resources/${r.id}/clients?page_size=2`);
  assert.equal(page1.status, 200);
  assert.equal(page1.json.total_size, 4);
  assert.equal(page1.json.prev_page_token, '');
  assert.deepEqual(page1.json.clients.map((c) => c.client_id), [created.json.client_id, pub.json.client_id]);
  assert.equal(page1.json.clients[0].client_secret, undefined, 'a secret is shown once');
  const page2 = await api('GET', `/api/v1/resources/${r.id}/clients?page_size=2&page_token=${page1.json.next_page_token}`);
  assert.deepEqual(page2.json.clients.map((c) => c.client_id), [pub2.json.client_id, dcr.json.client_id]);
  assert.equal(page2.json.next_page_token, '');
  const back = await api('GET', `/api/v1/resources/${r.id}/clients?page_size=2&page_token=${page2.json.prev_page_token}`);
  assert.deepEqual(back.json.clients.map((c) => c.client_id), [created.json.client_id, pub.json.client_id]);
  // Another resource's token is foreign here.
  const other = await createResource();
  const foreign = await api('GET', `/api/v1/resources/${other.id}/clients?page_token=${page1.json.next_page_token}`);
  assertProblem(assert, foreign, 400, 'invalid_argument');

  // Invalid metadata and unknown resources.
  for (const json of [{}, { redirect_uris: ['http://evil.test/cb'] }, { redirect_uris: ['https://a.test/cb'], scope: 'nope' }]) {
    assertProblem(assert, await api('POST', `/api/v1/resources/${r.id}/clients`, { json }), 400, 'invalid_argument');
  }
  assertProblem(assert, await api('POST', '/api/v1/resources/res_00000000000000000000000000/clients', {
    json: { redirect_uris: ['https://a.test/cb'] },
  }), 404, 'not_found');
  assertProblem(assert, await api('GET', '/api/v1/resources/res_00000000000000000000000000/clients'), 404, 'not_found');

  // Delete: only through its own resource, once.
  const path = (res, id) => `/api/v1/resources/${res}/clients/${id}`;
  assertProblem(assert, await api('DELETE', path(other.id, created.json.client_id)), 404, 'not_found');
  assert.equal((await api('DELETE', path(r.id, created.json.client_id))).status, 204);
  assertProblem(assert, await api('DELETE', path(r.id, created.json.client_id)), 404, 'not_found');
  assert.equal((await api('DELETE', path(r.id, dcr.json.client_id))).status, 204, 'DCR clients too');
  const after = await api('GET', `/api/v1/resources/${r.id}/clients`);
  assert.deepEqual(after.json.clients.map((c) => c.client_id), [pub.json.client_id, pub2.json.client_id]);
});

test('pruning: `portcullis oauth-clients prune` removes unused DCR clients only', async () => {
  const r = await createResource();
  const old = await register(r.id, { redirect_uris: ['https://old.example/cb'] });
  const pre = await api('POST', `/api/v1/resources/${r.id}/clients`, { json: { redirect_uris: ['https://pre.example/cb'] } });
  assert.equal(old.status, 201);
  assert.equal(pre.status, 201);
  // Nothing is an hour old yet.
  assert.equal(cli('oauth-clients', 'prune', '--older-than', '3600', '--resource', r.id).trim(), '0');
  // "Unused for 1 s" with a cut-off in whole seconds: 2 s on, the old client qualifies and
  // one registered now does not.
  await sleep(2100);
  const fresh = await register(r.id, { redirect_uris: ['https://fresh.example/cb'] });
  assert.equal(cli('oauth-clients', 'prune', '--older-than', '1', '--resource', r.id).trim(), '1');
  const ids = (await api('GET', `/api/v1/resources/${r.id}/clients`)).json.clients.map((c) => c.client_id);
  assert.deepEqual(ids, [pre.json.client_id, fresh.json.client_id]);
  assert.throws(() => cli('oauth-clients', 'prune', '--older-than', 'soon'));
});
