// Custom authentication (issue 14, contract §7 environment, §10): the environment settings API;
// a whole MCP sign-in in headless Chromium where the login page hands the sign-in to a test
// backend (the customer's login page), which completes it through
// POST /api/v1/login_requests/{id}/complete and sends the browser to /oauth/login/continue;
// and the guarantees: single use, 10 minutes, only in the browser that started it, an
// unverified address never linking to an existing user, the methods the environment allows.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import httpServer from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { baseUrl, sleep, dbQuery } from './harness.mjs';
import { api, unique, tokenWithScopes, createOrg } from './management.mjs';
import { mcpUrl, resourceId, CHROMIUM_ARGS, hasSession, authorizeInBrowser, authorization, redeem } from './sso-fixtures.mjs';
import { Browser, parseForms } from './browser.mjs';
import { connect, withAuth } from './sdk-client.mjs';
import { ChromiumProvider } from './chromium-signin.mjs';

const CHROMIUM = process.env.PORTCULLIS_CHROMIUM ?? '/usr/bin/chromium';
const ALL_METHODS = ['email', 'social', 'sso', 'custom'];

// The customer's backend: its login page "signs the user in" as `backend.user` at once,
// completes the login request with a token holding login_requests:write, and sends the
// browser on (no JavaScript anywhere).
const backend = { user: undefined, organization_id: undefined, seen: [] };
let server;
let context;
let userDataDir;

async function startBackend() {
  backend.token = await tokenWithScopes(['login_requests:write']);
  server = httpServer.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const id = url.searchParams.get('login_request_id');
    backend.seen.push(id);
    const body = { user: backend.user };
    if (backend.organization_id) body.organization_id = backend.organization_id;
    const done = await api('POST', `/api/v1/login_requests/${encodeURIComponent(id)}/complete`, { token: backend.token, json: body });
    if (done.status !== 200) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`complete failed: ${done.text}`);
      return;
    }
    res.writeHead(303, { location: done.json.continue_url }).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  backend.url = `http://127.0.0.1:${server.address().port}/login`;
}

async function settings(body) {
  const r = await api('PATCH', '/api/v1/environment', { json: body });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

before(async () => {
  await startBackend();
});

after(async () => {
  // The environment's settings: leave the login page as the other tests know it.
  await settings({ custom_login_url: '', login_methods: ALL_METHODS });
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  server?.closeAllConnections?.();
  await new Promise((r) => (server ? server.close(r) : r()));
});

// /oauth/authorize (a fresh DCR client of the demo resource) as far as the login page.
const loginPage = (browser) => authorizeInBrowser(browser, {});

// As far as the customer's login page: the login_request_id the customer gets. `href`: the
// authorization request to start from (a fresh client's by default).
async function toCustomer(browser, start) {
  const page = start ? await browser.follow(start) : await loginPage(browser);
  assert.equal(page.status, 200, page.html.slice(0, 300));
  const href = page.html.match(/href="(\/oauth\/login\/custom\?[^"]+)"/)?.[1];
  assert.ok(href, `no custom button: ${page.html.slice(0, 1500)}`);
  const r = await browser.request(new URL(href.replaceAll('&amp;', '&'), baseUrl).href);
  assert.equal(r.status, 303, r.html.slice(0, 300));
  const to = new URL(r.location);
  assert.equal(to.origin + to.pathname, backend.url);
  return to.searchParams.get('login_request_id');
}

const complete = (id, user, extra = {}) => api('POST', `/api/v1/login_requests/${encodeURIComponent(id)}/complete`,
  { token: backend.token, json: { user, ...extra } });
const continueUrl = (id) => `${baseUrl}/oauth/login/continue?login_request_id=${encodeURIComponent(id)}`;
const hashOf = (id) => createHash('sha256').update(id).digest('hex');

test('environment API: defaults, custom_login_url and login_methods checked, resources:write', async () => {
  const got = await api('GET', '/api/v1/environment');
  assert.equal(got.status, 200, got.text);
  assert.deepEqual(got.json.login_methods.slice().sort(), ALL_METHODS.slice().sort());
  for (const body of [{ custom_login_url: 'ftp://x.example.com/' }, { custom_login_url: 'http://app.example.com/login' }, { login_methods: [] },
    { login_methods: ['email', 'email'] }, { login_methods: ['password'] }, { color: 'red' }]) {
    const r = await api('PATCH', '/api/v1/environment', { json: body });
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
  }
  const set = await settings({ custom_login_url: 'https://app.example.com/login', login_methods: ['custom', 'email'] });
  assert.equal(set.custom_login_url, 'https://app.example.com/login');
  assert.deepEqual(set.login_methods, ['custom', 'email']);
  const reader = await tokenWithScopes(['resources:read']);
  assert.equal((await api('GET', '/api/v1/environment', { token: reader })).status, 403);
  await settings({ custom_login_url: '', login_methods: ALL_METHODS });
});

test('Chromium, whole MCP flow: login page → customer login page → complete → continue → consent → token → whoami', async () => {
  await settings({ custom_login_url: backend.url, login_methods: ALL_METHODS });
  const org = await createOrg();
  const email = `cara.${unique()}@example.com`;
  backend.user = { email, email_verified: true, given_name: 'Cara', family_name: 'Custom', external_id: `cust-${unique()}` };
  backend.organization_id = org.id;
  backend.seen = [];
  userDataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-chromium-custom-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  const issuer = `${baseUrl}/resources/${resourceId}`;
  const button = 'a:has-text("Continue with your account at 127.0.0.1")';
  const provider = new ChromiumProvider(context, email, async (page, here) => {
    if (!here.startsWith(`${baseUrl}/oauth/login`) || !(await page.$(button))) return false;
    await page.click(button);
    return true;
  }, { issuer: () => issuer, grantTypes: ['authorization_code'] });
  const session = await connect(mcpUrl, provider);
  const route = provider.route(baseUrl);
  for (const step of ['/oauth/login', '/oauth/consent']) assert.ok(route.includes(step), `${step} in ${route.join(' → ')}`);
  assert.equal(backend.seen.length, 1, 'the customer\'s page was reached once (its 303s are not frames)');
  const me = JSON.parse((await withAuth(provider, session, () => session.client.callTool({ name: 'whoami', arguments: {} }))).content[0].text);
  await session.client.close();
  assert.equal(me.email, email);
  const user = await api('GET', `/api/v1/users/${me.sub}`);
  assert.equal(user.json.given_name, 'Cara');
  assert.deepEqual(user.json.identities.map((i) => [i.provider, i.subject]), [['custom', backend.user.external_id]]);
  assert.equal(user.json.memberships.find((m) => m.organization_id === org.id)?.provisioned_by, 'api');
  backend.organization_id = undefined;
});

test('single use, 10 minutes, bound to the browser; complete once; scopes', async () => {
  await settings({ custom_login_url: backend.url, login_methods: ALL_METHODS });
  const user = { email: `dan.${unique()}@example.com`, email_verified: true };

  // Completed for one browser, continued in another: refused, and nothing is used up.
  const alice = new Browser();
  const id = await toCustomer(alice);
  assert.equal((await complete(id, user)).status, 200);
  const again = await complete(id, user);
  assert.equal(again.status, 410, 'completes once');
  const mallory = new Browser();
  const stolen = await mallory.request(continueUrl(id));
  assert.equal(stolen.status, 403, stolen.html.slice(0, 300));
  assert.ok(!hasSession(mallory));
  const mine = await alice.request(continueUrl(id));
  assert.equal(mine.status, 303, mine.html.slice(0, 500));
  assert.match(mine.location, /\/oauth\/consent\?/);
  assert.ok(hasSession(alice));
  // Replayed: refused.
  const replay = new Browser();
  replay.cookies = new Map(alice.cookies);
  for (const name of [...replay.cookies.keys()]) if (name.endsWith('portcullis_session')) replay.cookies.delete(name);
  const r2 = await replay.request(continueUrl(id));
  assert.equal(r2.status, 410, r2.html.slice(0, 300));
  assert.ok(!hasSession(replay));

  // Not completed yet: the browser cannot skip the customer.
  const early = new Browser();
  const earlyId = await toCustomer(early);
  assert.equal((await early.request(continueUrl(earlyId))).status, 409);
  assert.ok(!hasSession(early));

  // Expired (10 minutes after the start): neither completes nor continues.
  const slow = new Browser();
  const slowId = await toCustomer(slow);
  dbQuery(`UPDATE custom_logins SET expires_at = UNIX_TIMESTAMP() - 1 WHERE id_hash = UNHEX('${hashOf(slowId)}')`);
  assert.equal((await complete(slowId, user)).status, 410);
  const slow2 = new Browser();
  const slow2Id = await toCustomer(slow2);
  assert.equal((await complete(slow2Id, user)).status, 200);
  dbQuery(`UPDATE custom_logins SET expires_at = UNIX_TIMESTAMP() - 1 WHERE id_hash = UNHEX('${hashOf(slow2Id)}')`);
  assert.equal((await slow2.request(continueUrl(slow2Id))).status, 410);
  assert.ok(!hasSession(slow2));

  // Unknown ids, and the scope the backend needs.
  assert.equal((await complete(`nope-${unique()}`, user)).status, 404);
  assert.equal((await new Browser().request(continueUrl(`nope-${unique()}`))).status, 404);
  const other = new Browser();
  const otherId = await toCustomer(other);
  const wrongScope = await tokenWithScopes(['resources:write']);
  assert.equal((await api('POST', `/api/v1/login_requests/${otherId}/complete`, { token: wrongScope, json: { user } })).status, 403);
  assert.equal((await api('POST', `/api/v1/login_requests/${otherId}/complete`, { token: null, json: { user } })).status, 401);
  for (const body of [{}, { user: {} }, { user: { email: 'not an address' } }, { user: { ...user, role: 'admin' } }, { user, organization_id: 'org_nope' }]) {
    const r = await api('POST', `/api/v1/login_requests/${otherId}/complete`, { token: backend.token, json: body });
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
  }
});

// docs/oauth.md, "The organization in a token": a completion that names an organization signs
// in through it; one that names none, through none.
test('org_id: the tokens of a completion that names an organization carry it; without one, none', async () => {
  await settings({ custom_login_url: backend.url, login_methods: ALL_METHODS });
  const org = await createOrg();
  const user = { email: `olga.${unique()}@example.com`, email_verified: true, external_id: `cust-${unique()}` };
  for (const [extra, expected] of [[{ organization_id: org.id }, org.id], [{}, undefined]]) {
    const browser = new Browser();
    const auth = await authorization({});
    const id = await toCustomer(browser, auth.href);
    const done = await complete(id, user, extra);
    assert.equal(done.status, 200, done.text);
    let back = await browser.follow(continueUrl(id));
    if (!back.location) back = await browser.submit(back, 'decision', { decision: 'allow' });
    const claims = decodeJwt((await redeem(auth, back.location)).access_token);
    assert.equal(claims.org_id, expected, JSON.stringify(extra));
  }
});

test('an unverified address never links to an existing user; the methods the environment allows', async () => {
  await settings({ custom_login_url: backend.url, login_methods: ALL_METHODS });
  const victim = await api('POST', '/api/v1/users', { json: { email: `vic.${unique()}@example.com` } });
  assert.equal(victim.status, 201, victim.text);
  for (const extra of [{}, { external_id: `x-${unique()}` }]) {
    const eve = new Browser();
    const id = await toCustomer(eve);
    assert.equal((await complete(id, { email: victim.json.email, email_verified: false, ...extra })).status, 200);
    const r = await eve.request(continueUrl(id));
    assert.equal(r.status, 403, r.html.slice(0, 300));
    assert.ok(!hasSession(eve));
  }
  assert.equal(dbQuery(`SELECT COUNT(*) FROM user_identities WHERE user_id = '${victim.json.id}'`)[0][0], '0');

  // Custom as the only method: the login page goes straight to the customer.
  await settings({ login_methods: ['custom'] });
  const direct = await loginPage(new Browser());
  assert.equal(direct.status, 303);
  assert.equal(new URL(direct.location).origin + new URL(direct.location).pathname, backend.url);

  // E-mail codes off: the form stays (it finds an organization's SSO), no code is sent.
  await settings({ login_methods: ['custom', 'sso'] });
  const b = new Browser();
  const page = await loginPage(b);
  assert.equal(page.status, 200, page.html.slice(0, 300));
  const form = parseForms(page.html).find((f) => 'email' in f.fields);
  assert.ok(form, 'the e-mail form is always there');
  const sent = await b.submit(page, 'email', { email: `nocode.${unique()}@example.com` });
  assert.equal(sent.status, 403);
  assert.match(sent.html, /not offered here/);

  // Custom off: no button, and /oauth/login/custom refuses.
  await settings({ custom_login_url: '', login_methods: ALL_METHODS });
  const plain = await loginPage(new Browser());
  assert.ok(!plain.html.includes('/oauth/login/custom'));
  await sleep(10);
});
