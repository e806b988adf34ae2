// What the enterprise SSO tests share (sso-oidc.test.mjs, sso-saml.test.mjs): organizations with
// a verified domain, the failure events, the session check, and an authorization that goes
// straight to the organization's IdP by its login_hint.
import assert from 'node:assert/strict';
import https from 'node:https';
import { createServer } from 'node:http';
import { mkdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { env, baseUrl, varDir, http, sleep, dbQuery, masterPid, childPids } from './harness.mjs';
import { api, unique, createOrg } from './management.mjs';
import { freePort, startProtectedNginx, validateLocation } from './mcp-nginx.mjs';

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

const REDIRECT = 'http://127.0.0.1:3000/callback';

// An authorization request of a fresh DCR client of the demo resource (PKCE; it may refresh),
// with `params` added (a login_hint, a connection_id): { href, clientId, verifier }, what
// redeem() needs for its code.
export async function authorization(params = {}) {
  const reg = await http(`/resources/${resourceId}/client_register`, { method: 'POST',
    json: { client_name: 'Sign-in test', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'] } });
  assert.equal(reg.status, 201, reg.text);
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: reg.json.client_id, redirect_uri: REDIRECT,
    state: 'client-state', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    scope: 'demo:read', resource: mcpUrl, ...params })) authorize.searchParams.set(k, v);
  return { href: authorize.href, clientId: reg.json.client_id, verifier };
}

// The /oauth/authorize URL alone.
export async function authorizeUrl(params = {}) {
  return (await authorization(params)).href;
}

// The tokens for the code of `redirect` (the 303 that left Portcullis for the client).
export async function redeem(auth, redirect) {
  const code = new URL(redirect).searchParams.get('code');
  assert.ok(code, `no code in ${redirect}`);
  const t = await http('/oauth/token', { method: 'POST',
    form: { grant_type: 'authorization_code', code, code_verifier: auth.verifier, redirect_uri: REDIRECT, client_id: auth.clientId } });
  assert.equal(t.status, 200, t.text);
  return t.json;
}

// An authorization in a browser whose session serves it (no sign-in): the redirect that leaves
// for the client, through the consent page when one is asked for.
export async function authorizeSignedIn(browser, auth) {
  let page = await browser.follow(auth.href);
  if (!page.location) {
    assert.match(page.url, /\/oauth\/consent\?/, `signed in, so no ${page.url}`);
    page = await browser.submit(page, 'decision', { decision: 'allow' });
  }
  assert.ok(page.location.startsWith(REDIRECT), page.location);
  return page;
}

// Where an authorization in this browser goes first: 'signed in' when its session serves it
// (the consent page or the client), else the path of the page it stops at (/oauth/login).
export async function firstStop(browser, params) {
  const page = await browser.follow((await authorization(params)).href);
  if (page.location?.startsWith(REDIRECT) || /\/oauth\/consent\?/.test(page.url)) return 'signed in';
  return new URL(page.url).pathname;
}

// The identity headers the demo resource's MCP server receives with `token`, from an nginx of
// its own with Portcullis' validator snippets (nginx/portcullis) in front of an upstream that
// keeps them.
export async function headersAtMcpServer(token) {
  const seen = [];
  const upstream = createServer((req, res) => {
    seen.push(req.headers);
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  const port = await freePort();
  const nginx = await startProtectedNginx({ port, resourceId, serverBody: `${validateLocation('read', 'demo:read')}
        location /mcp {
            auth_request /_portcullis/auth/read;
            include portcullis/mcp-protect.conf;
            include portcullis/mcp-proxy-headers.conf;
            proxy_pass http://127.0.0.1:${upstream.address().port};
        }` });
  try {
    const r = await fetch(`${nginx.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{}' });
    assert.equal(r.status, 200, await r.text());
    assert.equal(seen.length, 1);
    return seen[0];
  } finally {
    nginx.stop();
    await new Promise((r) => upstream.close(r));
  }
}

// A refresh of the client's grant: the token endpoint's answer, whatever it is.
export const refreshGrant = (auth, refreshToken) => http('/oauth/token', { method: 'POST',
  form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: auth.clientId } });

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

// Restarts a pool's workers (SIGHUP: the master replaces them one by one) and waits until none
// of the old ones is left and each new one logged `ready` (the stack logs at debug level): the
// next requests are each new worker's first.
export async function restartWorkers(family, ready = 'worker accepting') {
  const master = masterPid(family);
  const before = childPids(master);
  assert.ok(before.length > 0, `${family} has workers`);
  const log = path.join(varDir, 'log', `${family}.log`);
  const logStart = readFileSync(log, 'utf8').length;
  process.kill(master, 'SIGHUP');
  for (let i = 0; i < 1200; i++) {
    const now = childPids(master);
    if (now.length === before.length && !now.some((p) => before.includes(p))) {
      const said = new Set(readFileSync(log, 'utf8').slice(logStart).split('\n')
        .filter((l) => l.includes(`"${ready}"`)).map((l) => JSON.parse(l).pid));
      if (now.every((p) => said.has(p))) return now;
    }
    await sleep(100);
  }
  assert.fail(`the ${family} workers were not all replaced (and "${ready}") within 120 s`);
}

// Follows redirects within Portcullis like Browser.follow, noting each hop's X-Request-Id
// (and path) in `hops`.
export async function followNoting(browser, url, hops, options) {
  let r = await browser.request(url, options);
  hops.push({ path: new URL(url).pathname, requestId: r.headers.get('x-request-id') });
  for (let i = 0; i < 10 && r.location && r.location.startsWith(baseUrl); i++) {
    r = await browser.request(r.location);
    hops.push({ path: new URL(r.url).pathname, requestId: r.headers.get('x-request-id') });
  }
  return r;
}

// The workers' own timing of `hops` (their access-log lines, found by request id in the logs
// of `families`): duration_us, and outbound_us, the part of it spent waiting on another server
// (the IdP's token endpoint). Waits for the lines (written after the response).
export async function workerTimes(hops, families = ['oauth', 'sso']) {
  const wanted = new Set(hops.map((h) => h.requestId));
  assert.ok(!wanted.has(null) && !wanted.has(undefined), 'every hop has an X-Request-Id');
  for (let i = 0; i < 50; i++) {
    const found = new Map();
    for (const family of families) {
      const file = path.join(varDir, 'log', `${family}.log`);
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line.includes('"duration_us"')) continue;
        let l;
        try { l = JSON.parse(line); } catch { continue; }
        if (wanted.has(l.request_id) && l.duration_us !== undefined) found.set(l.request_id, l);
      }
    }
    if (found.size === wanted.size) {
      return hops.map((h) => {
        const l = found.get(h.requestId);
        return { requestId: h.requestId, path: l.path, status: l.status, ms: l.duration_us / 1000, outboundMs: (l.outbound_us ?? 0) / 1000 };
      });
    }
    await sleep(100);
  }
  assert.fail(`no access-log line for some of ${hops.map((h) => h.path).join(', ')}`);
}

// The "the whole SSO login adds < 50 ms of server time over the IdP's own" rests on one
// property a test can show without a clock: no sign-in prepares a connection — builds its Lasso
// server (SP metadata and keys, the IdP's metadata parsed: 100–300 ms) or fetches the IdP's
// discovery document or JWKS (two TLS round trips). Each new sso worker prepares every active
// connection before it accepts a request, then between requests (lib/sso/warm.h). Every
// preparation logs "SSO connection prepared", with the request's id when it happens inside a
// request. So on a cold worker (the first sign-in after a restart) and on a warm one, no such
// line may carry the id of one of the sign-in's requests; and the restart's own preparations are
// there, without one. The server times are printed; bench/sso measures them.
// `signIn` returns {hops, ours}: the worker-side times (workerTimes) and their sum without the
// time spent waiting on the IdP.
export async function assertSignInPreparesNothing(label, signIn) {
  const log = path.join(varDir, 'log', 'sso.log');
  for (const kind of ['cold', 'warm']) {
    const logStart = readFileSync(log, 'utf8').length;
    if (kind === 'cold') await restartWorkers('sso', 'sso connections ready');
    const t = await signIn();
    const detail = t.hops.map((h) => `${h.path.replace(/conn_[a-z0-9]+/, '{id}')} ${h.ms.toFixed(1)} ms` +
      (h.outboundMs ? ` (${h.outboundMs.toFixed(1)} waiting on the IdP)` : '')).join(', ');
    console.log(`# sso-timing ${label} ${kind}: portcullis ${t.ours.toFixed(1)} ms: ${detail}`);
    const prepared = readFileSync(log, 'utf8').slice(logStart).split('\n')
      .filter((l) => l.includes('"SSO connection prepared"')).map((l) => JSON.parse(l));
    const ids = new Set(t.hops.map((h) => h.requestId));
    const during = prepared.filter((l) => ids.has(l.request_id));
    assert.deepEqual(during, [], `${label} ${kind} sign-in prepared a connection on its request path`);
    if (kind === 'cold') {
      assert.ok(prepared.some((l) => l.request_id === undefined), `${label}: the restarted workers prepared the connection first`);
    }
  }
}

// A SAML IdP's metadata document (an HTTP-Redirect SSO service and a signing certificate).
export function idpMetadata(entityId) {
  const dir = path.join(os.tmpdir(), `admin-idp-${unique()}`);
  mkdirSync(dir);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=admin-test-idp',
    '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem')], { stdio: 'ignore' });
  const cert = readFileSync(path.join(dir, 'c.pem'), 'utf8').replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  return `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.com/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
}
