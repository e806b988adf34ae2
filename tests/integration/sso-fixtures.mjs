// What the enterprise SSO tests share (sso-oidc.test.mjs, sso-saml.test.mjs): organizations with
// a verified domain, the failure events, the session check, and an authorization that goes
// straight to the organization's IdP by its login_hint.
import assert from 'node:assert/strict';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { env, baseUrl, varDir, http, sleep, dbQuery } from './harness.mjs';
import { api, unique, createOrg } from './management.mjs';

export const mcpUrl = env.PORTCULLIS_DEMO_MCP_URL;
export const resourceId = env.PORTCULLIS_DEMO_RESOURCE_ID;
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const tlsDir = process.env.PORTCULLIS_TEST_TLS_DIR ?? path.join(varDir, 'test-tls');

// An HTTPS server on 127.0.0.1:`port` with the run's test certificate (the stack trusts its CA),
// added to `servers` (closeAll ends them).
export async function listenTls(servers, port, handler) {
  const tls = { key: readFileSync(path.join(tlsDir, 'server.key')), cert: readFileSync(path.join(tlsDir, 'server.pem')) };
  const server = https.createServer(tls, handler);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  servers.push(server);
  return server;
}

export async function closeAll(servers) {
  for (const s of servers) s.closeAllConnections?.();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
}

// An organization holding a verified domain (verified on the administrator's word).
export async function orgWithDomain(prefix = 'sso') {
  const org = await createOrg();
  const domain = `${prefix}-${unique()}.com`;
  const d = await api('POST', `/api/v1/organizations/${org.id}/domains`, { json: { domain } });
  assert.equal(d.status, 201, d.text);
  const v = await api('POST', `/api/v1/organizations/${org.id}/domains/${d.json.id}/verify`, { json: { method: 'admin' } });
  assert.equal(v.status, 200, v.text);
  return { org, domain };
}

// The user.login.failed event of this organization whose reason is `reason` (events are
// written after the response, so wait a little).
export async function failureEvent(orgId, reason) {
  for (let i = 0; i < 40; i++) {
    const rows = dbQuery(`SELECT data FROM events WHERE type = 'user.login.failed' AND organization_id = '${orgId}'`);
    const hit = rows.map(([d]) => JSON.parse(d)).find((d) => d.reason === reason);
    if (hit) return hit;
    await sleep(100);
  }
  assert.fail(`no user.login.failed event with reason ${reason} for ${orgId}`);
}

export const hasSession = (browser) => [...browser.cookies.keys()].some((k) => k.endsWith('portcullis_session'));

// The /oauth/authorize URL of a fresh DCR client of the demo resource (PKCE), with `params`
// added (a login_hint, a connection_id).
export async function authorizeUrl(params = {}) {
  const reg = await http(`/resources/${resourceId}/client_register`, { method: 'POST',
    json: { client_name: 'Sign-in test', redirect_uris: ['http://127.0.0.1:3000/callback'], token_endpoint_auth_method: 'none' } });
  assert.equal(reg.status, 201, reg.text);
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: reg.json.client_id, redirect_uri: 'http://127.0.0.1:3000/callback',
    state: 'client-state', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    scope: 'demo:read', resource: mcpUrl, ...params })) authorize.searchParams.set(k, v);
  return authorize.href;
}

// The same, followed within Portcullis: the page, or the redirect elsewhere.
export async function authorizeInBrowser(browser, params) {
  return browser.follow(await authorizeUrl(params));
}

// The same with a login_hint of an SSO domain: home-realm discovery skips the e-mail page and
// the redirects end at the IdP. Returns that redirect, parsed.
export async function toIdentityProvider(browser, email) {
  const r = await authorizeInBrowser(browser, { login_hint: email });
  assert.equal(r.status, 303, `${r.url}: ${r.html.slice(0, 500)}`);
  return new URL(r.location);
}
