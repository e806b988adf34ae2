// The admin portal (docs/admin.md) as its users meet it: sign-in through the environment's own
// login pages, environment and organization administrators, the CSRF token of every form, the
// pages' security headers, and each page driven in headless Chromium (playwright-core) and
// audited with axe-core. Every page visited is also captured as a full-page screenshot; with
// PORTCULLIS_SCREENSHOTS=1 they are written over docs/admin.md's images (docs/admin/*.png),
// otherwise into a temporary directory, so a test run leaves the tracked files alone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { baseUrl, repoDir } from './harness.mjs';
import { api, unique, createOrg, createUser, addMember, eventsOf } from './management.mjs';
import { Browser, parseForms, lastMail, signInWithCode, completeAuthorization } from './browser.mjs';
import { CHROMIUM_ARGS, authorizeUrl, idpMetadata } from './sso-fixtures.mjs';
import { startDnsmasq } from './dns-server.mjs';

const CHROMIUM = process.env.PORTCULLIS_CHROMIUM ?? '/usr/bin/chromium';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const KEEP_SHOTS = process.env.PORTCULLIS_SCREENSHOTS === '1';
const SHOTS = KEEP_SHOTS
  ? path.join(repoDir, 'docs', 'admin')
  : mkdtempSync(path.join(os.tmpdir(), 'portcullis-admin-shots-'));

let browser;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close();
  if (!KEEP_SHOTS) rmSync(SHOTS, { recursive: true, force: true });
});

// A user holding the environment role `admin`.
async function environmentAdmin() {
  const user = await createUser({ email: `admin-${unique()}@example.com` });
  const r = await api('PATCH', `/api/v1/users/${user.id}`, { json: { environment_roles: ['admin'] } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.environment_roles, ['admin']);
  return r.json;
}

// Signs `email` in to the portal with the scripted browser (e-mailed code); returns the page
// the portal showed after the sign-in.
async function scriptedSignIn(email, start = '/admin') {
  const b = new Browser();
  const first = await b.follow(baseUrl + start);
  assert.match(first.url, /\/oauth\/login\?login_request_id=/, first.html.slice(0, 500));
  let page = await signInWithCode(b, first, email);
  for (let i = 0; i < 10 && page.location && page.location.startsWith(baseUrl); i++) page = await b.request(page.location);
  return { browser: b, page };
}

// The WCAG 2.1 A/AA violations of impact serious or critical that axe finds on the page.
async function audit(page, what) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => globalThis.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
  }));
  const lines = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${v.help} — ${n.target.join(' ')}`));
  assert.deepEqual(lines, [], `${what}: ${page.url()}`);
  assert.ok(result.passes.length > 10, `${what}: axe ran`);
}

// A Chromium context signed in to the portal as `email` (through the login page's e-mail form
// and the code page, as a person would), at `width` px.
async function chromiumSignIn(email, width = 1280) {
  // The audit script is injected by the test; the pages' own CSP stays strict (checked below).
  const context = await browser.newContext({ bypassCSP: true, viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${baseUrl}/admin`);
  assert.match(page.url(), /\/oauth\/login\?/);
  await page.fill('input[name=email]', email);
  await Promise.all([page.waitForNavigation(), page.press('input[name=email]', 'Enter')]);
  const mail = await lastMail(email);
  await page.fill('input[name=code]', mail.code);
  await Promise.all([page.waitForURL(/\/admin(\?|$)/), page.press('input[name=code]', 'Enter')]);
  return { context, page };
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

test('PATCH /users/{id} sets environment_roles; an unknown role is refused', async () => {
  const user = await createUser();
  assert.deepEqual(user.environment_roles, []);
  const bad = await api('PATCH', `/api/v1/users/${user.id}`, { json: { environment_roles: ['root'] } });
  assert.equal(bad.status, 400, bad.text);
  const twice = await api('PATCH', `/api/v1/users/${user.id}`, { json: { environment_roles: ['admin', 'admin'] } });
  assert.equal(twice.status, 400, twice.text);
  const ok = await api('PATCH', `/api/v1/users/${user.id}`, { json: { environment_roles: ['admin'] } });
  assert.deepEqual(ok.json.environment_roles, ['admin']);
  assert.deepEqual((await api('GET', `/api/v1/users/${user.id}`)).json.environment_roles, ['admin']);
  const cleared = await api('PATCH', `/api/v1/users/${user.id}`, { json: { environment_roles: null } });
  assert.deepEqual(cleared.json.environment_roles, []);
});

test('the portal signs in through the login pages; cookie, CSP and frame headers', async () => {
  const anonymous = await fetch(`${baseUrl}/admin/organizations?page_size=5`, { redirect: 'manual' });
  assert.equal(anonymous.status, 303);
  assert.equal(anonymous.headers.get('location'), '/admin/login?next=%2Fadmin%2Forganizations%3Fpage_size%3D5');

  const me = await environmentAdmin();
  const { browser: b, page } = await scriptedSignIn(me.email, '/admin/organizations?page_size=5');
  assert.equal(page.status, 200, page.html.slice(0, 1000));
  assert.match(page.url, /\/admin\/organizations\?page_size=5$/, 'back where the sign-in began');
  const csp = page.headers.get('content-security-policy');
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /style-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  assert.ok(b.cookies.has('portcullis_admin'), 'the portal session cookie');

  // The cookies' attributes (local mode over loopback: no Secure, so no __Host- prefix).
  const login = await fetch(`${baseUrl}/admin/login`, { redirect: 'manual' });
  assert.equal(login.status, 303);
  assert.match(login.headers.getSetCookie().join('\n'), /portcullis_admin_login=[^;]+; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax/);
  const b2 = new Browser();
  const first = await b2.follow(`${baseUrl}/admin`);
  const sent = await b2.submit(first, 'email', { email: me.email });
  const form = parseForms(sent.html).find((f) => 'code' in f.fields);
  const code = await b2.request(new URL(form.action || sent.url, sent.url).href, { method: 'POST', form: { ...form.fields, code: (await lastMail(me.email)).code } });
  assert.equal(code.status, 303);
  assert.match(code.location, /\/admin\/callback\?code=/, 'no consent page for the portal');
  const cb = await fetch(code.location, { redirect: 'manual', headers: { cookie: b2.cookieHeader() } });
  assert.equal(cb.status, 303);
  const started = cb.headers.getSetCookie().filter((c) => c.startsWith('portcullis_admin='));
  assert.equal(started.length, 1, cb.headers.getSetCookie().join('\n'));
  assert.match(started[0], /^portcullis_admin=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
  // The code is single use.
  const replay = await fetch(code.location, { redirect: 'manual', headers: { cookie: b2.cookieHeader() } });
  assert.equal(replay.status, 400);
  // The same code from a browser that did not start the sign-in is refused.
  const stolen = await fetch(code.location, { redirect: 'manual' });
  assert.equal(stolen.status, 400);
});

test('a form without the CSRF token is refused; sign-out ends the session', async () => {
  const me = await environmentAdmin();
  const { browser: b, page } = await scriptedSignIn(me.email);
  assert.equal(page.status, 200);
  const csrf = page.html.match(/name="csrf" value="([^"]+)"/)[1];
  const none = await b.request(`${baseUrl}/admin/logout`, { method: 'POST', form: {} });
  assert.equal(none.status, 403);
  const wrong = await b.request(`${baseUrl}/admin/logout`, { method: 'POST', form: { csrf: csrf.slice(1) + 'x' } });
  assert.equal(wrong.status, 403);
  assert.equal((await b.request(`${baseUrl}/admin`)).status, 200, 'still signed in');
  const out = await b.request(`${baseUrl}/admin/logout`, { method: 'POST', form: { csrf } });
  assert.equal(out.status, 303);
  assert.equal(out.location, `${baseUrl}/admin/signed-out`);
  const after = await b.request(`${baseUrl}/admin`);
  assert.equal(after.status, 303);
  assert.match(after.location, /\/admin\/login/);
});

test('a user who administers nothing gets a 403 page; an organization admin only their organization', async () => {
  const nobody = await createUser();
  const { page } = await scriptedSignIn(nobody.email);
  assert.equal(page.status, 403);
  assert.match(page.html, /Not an administrator/);

  const org = await createOrg();
  const orgAdmin = await createUser();
  await addMember(org.id, orgAdmin.id, { roles: [{ name: 'admin' }], metadata: {} });
  const signed = await scriptedSignIn(orgAdmin.email);
  assert.equal(signed.page.status, 200);
  assert.ok(signed.page.html.includes(`/admin/organizations/${org.id}`), 'their organization is listed');
  assert.doesNotMatch(signed.page.html, /href="\/admin\/users"/, 'no environment sections');
  const users = await signed.browser.request(`${baseUrl}/admin/users`);
  assert.equal(users.status, 403);
});

test('the overview in Chromium at 360 px and on a desktop: axe finds nothing serious', async () => {
  const me = await environmentAdmin();
  const { context, page } = await chromiumSignIn(me.email, 360);
  assert.equal(await page.textContent('h1'), 'Overview');
  await audit(page, 'overview (360 px)');
  await shot(page, 'overview-360');
  // Keyboard: the first Tab reaches the skip link, which moves focus to <main>.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to content');
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 360, `no horizontal scrolling at 360 px (${width})`);
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, 'overview');
  await context.close();
});

// Submits the form whose submit button reads `button` and waits for the next page.
async function press(page, button) {
  await Promise.all([page.waitForNavigation(), page.click(`button:has-text("${button}")`)]);
}

// The events of `type` about `subject` (subject=id), through the events API.
async function apiEvents(type, query) {
  const r = await api('GET', `/api/v1/events?types=${type}&${query}`);
  assert.equal(r.status, 200, r.text);
  return r.json.events;
}

test('an environment administrator runs the environment from the portal (Chromium, axe on every page)', async () => {
  const me = await environmentAdmin();
  const { context, page } = await chromiumSignIn(me.email);
  page.on('dialog', (d) => d.accept());  // the confirmations of destructive forms
  const visit = async (url, name) => {
    const r = await page.goto(url);
    assert.equal(r.status(), 200, `${url}: ${(await page.content()).slice(0, 500)}`);
    await audit(page, name);
    await shot(page, name);
  };
  const u = unique();

  // Resources: register an MCP server with a lifetime outside 5..60 minutes (warned about),
  // whose access tokens are signed with ES256.
  await visit(`${baseUrl}/admin/resources`, 'resources');
  await page.fill('#f-name', `Todo ${u}`);
  await page.fill('#f-server_url', `https://todo-${u}.example.com/mcp`);
  await page.fill('#f-access_token_ttl_seconds', '7200');
  await page.selectOption('#f-access_token_signing_alg', 'ES256');
  await page.fill('#f-scopes', 'todo:read Read your todos\ntodo:write Change your todos');
  await press(page, 'Register resource');
  assert.match(page.url(), /\/admin\/resources\/res_[0-9a-z]+\?created=1$/);
  const resourceId = page.url().match(/(res_[0-9a-z]+)/)[1];
  assert.match(await page.textContent('main'), /above the recommended maximum of 3600/);
  const resource = (await api('GET', `/api/v1/resources/${resourceId}`)).json;
  assert.deepEqual(resource.scopes.map((x) => x.name), ['todo:read', 'todo:write']);
  assert.equal(resource.access_token_ttl_seconds, 7200);
  assert.equal(resource.dcr_enabled, true);
  assert.equal(resource.access_token_signing_alg, 'ES256');
  // The resource's page states the algorithm among its facts, as the API has it.
  const facts = await page.$$eval('dl.facts dt', (dts) => Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling.textContent])));
  assert.equal(facts['Access token signing algorithm'], 'ES256');
  // The list shows each resource's algorithm as the API has it: the first page's, then the
  // pages up to the new one (oldest first), whose cell says ES256.
  await visit(`${baseUrl}/admin/resources`, 'resources');
  const headers = await page.$$eval('table thead th', (ths) => ths.map((th) => th.textContent));
  const column = headers.indexOf('Token signing');
  assert.ok(column > 0, headers.join(', '));
  const listedRows = () => page.$$eval('table tbody tr', (trs, i) => trs.map((tr) => [tr.querySelector('a').getAttribute('href').split('/').pop(), tr.cells[i].textContent]), column);
  let listed = await listedRows();
  assert.ok(listed.length > 0);
  for (const [id, alg] of listed.slice(0, 10)) {
    assert.equal(alg, (await api('GET', `/api/v1/resources/${id}`)).json.access_token_signing_alg, id);
  }
  for (let pages = 0; !listed.some(([id]) => id === resourceId) && pages < 100; pages++) {
    const next = await page.$('a[rel=next]');
    assert.ok(next, `${resourceId} is listed`);
    await Promise.all([page.waitForNavigation(), next.click()]);
    listed = await listedRows();
  }
  assert.deepEqual(listed.find(([id]) => id === resourceId), [resourceId, 'ES256']);
  // A client registers (DCR), shows on the page, and is revoked from it.
  const reg = await fetch(`${baseUrl}/resources/${resourceId}/client_register`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: `Editor ${u}`, redirect_uris: ['http://127.0.0.1:3000/callback'], token_endpoint_auth_method: 'none' }) });
  assert.equal(reg.status, 201);
  const clientId = (await reg.json()).client_id;
  await visit(`${baseUrl}/admin/resources/${resourceId}`, 'resource');
  assert.ok(await page.$(`text=${clientId}`), 'the registered client is listed');
  await press(page, 'Revoke');
  assert.match(page.url(), /revoked=1/);
  assert.equal((await api('GET', `/api/v1/resources/${resourceId}/clients`)).json.clients.length, 0);

  // Organizations.
  await visit(`${baseUrl}/admin/organizations`, 'organizations');
  await page.fill('#f-display_name', `Acme ${u}`);
  await press(page, 'Create organization');
  const orgId = page.url().match(/(org_[0-9a-z]+)/)[1];

  // A domain: the TXT record to publish, a failed check saying why, then the record published.
  const zone = `admin-${u}.com`;
  const domain = `acme.${zone}`;
  await page.fill('#f-domain', domain);
  await press(page, 'Add domain');
  assert.match(page.url(), /\/domains\/dom_/);
  const recordName = (await page.textContent('[data-copy="record name"]')).trim();
  const recordValue = (await page.textContent('[data-copy="record value"]')).trim();
  assert.equal(recordName, `_portcullis-verification.${domain}`);
  let dns = await startDnsmasq({ zones: [zone], hosts: [recordName] });
  try {
    await press(page, 'Verify now');
    assert.match(await page.textContent('.alert'), /has no TXT record/);
    await audit(page, 'domain (verification failed)');
  } finally {
    await dns.stop();
  }
  dns = await startDnsmasq({ zones: [zone], txt: [[recordName, [recordValue]]] });
  try {
    await audit(page, 'domain');
    await shot(page, 'domain');
    await press(page, 'Verify now');
    assert.match(page.url(), /verified=1/);
    assert.match(await page.textContent('main'), /verified by dns/);
  } finally {
    await dns.stop();
  }

  // A SAML connection from the IdP's metadata: tested, activated; another whose metadata cannot
  // be fetched says why its test fails.
  await page.goto(`${baseUrl}/admin/organizations/${orgId}`);
  await page.click('summary:has-text("New SSO connection")');
  await page.fill('#f-connection_name', 'Acme Entra ID');
  await page.fill('#f-idp_metadata_xml', idpMetadata(`https://idp-${u}.example.com/metadata`));
  await press(page, 'Create connection');
  assert.match(page.url(), /\/connections\/conn_[0-9a-z]+\?created=1/);
  const connectionId = page.url().match(/(conn_[0-9a-z]+)/)[1];
  await press(page, 'Test connection');
  assert.match(await page.textContent('.notice'), /The connection works/);
  await press(page, 'Activate');
  assert.equal((await api('GET', `/api/v1/organizations/${orgId}/connections/${connectionId}`)).json.state, 'active');
  await visit(page.url(), 'connection');
  const spMetadata = await fetch(`${baseUrl}/sso/saml/${connectionId}/metadata`);
  assert.equal(spMetadata.status, 200, 'the SP metadata the page links to');
  await page.goto(`${baseUrl}/admin/organizations/${orgId}`);
  await page.click('summary:has-text("New SSO connection")');
  await page.fill('#f-connection_name', 'Broken IdP');
  // Metadata without an HTTP-Redirect single sign-on service: Lasso cannot send users there.
  await page.fill('#f-idp_metadata_xml', idpMetadata(`https://broken-${u}.example.com/metadata`).replace('bindings:HTTP-Redirect', 'bindings:HTTP-POST'));
  await press(page, 'Create connection');
  await press(page, 'Test connection');
  assert.match(await page.textContent('.alert'), /The test failed: /);
  await audit(page, 'connection (test failed)');

  // A SCIM directory: the token once, then a provisioning call shows as the last sync and in
  // the recent SCIM activity.
  await page.goto(`${baseUrl}/admin/organizations/${orgId}`);
  await page.fill('#f-directory_name', 'Entra provisioning');
  await press(page, 'Create SCIM directory');
  const token = (await page.textContent('[data-copy="bearer token"]')).trim();
  assert.match(await page.textContent('.warning'), /not shown again/);
  const directoryUrl = page.url();
  const scimUser = `scim.${u}@${domain}`;
  const provisioned = await fetch(`${baseUrl}/scim/v2/Users`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
    body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: scimUser, emails: [{ value: scimUser, primary: true }], active: true }) });
  assert.equal(provisioned.status, 201, await provisioned.text());
  const directoryId = (await page.textContent('dl.facts dd code')).trim();
  assert.match(directoryId, /^dir_/);
  let directoryText = '';
  for (let i = 0; i < 30 && !/scim\.user\.created/.test(directoryText); i++) {
    await page.goto(`${baseUrl}/admin/organizations/${orgId}/directories/${directoryId}`);
    directoryText = await page.textContent('main');
  }
  assert.match(directoryText, /scim\.user\.created/);
  assert.doesNotMatch(directoryText, /Last sync\s*never/);
  assert.ok(!directoryText.includes(token), 'the token is shown only once');
  await audit(page, 'directory');
  await shot(page, 'directory');
  assert.ok(directoryUrl);
  await visit(`${baseUrl}/admin/organizations/${orgId}`, 'organization');

  // A user signed in to an MCP client: found by e-mail, signed out everywhere.
  const person = `person.${u}@example.com`;
  const b = new Browser();
  const back = await completeAuthorization(b, await authorizeUrl(), person);
  assert.match(back.location, /code=/);
  await visit(`${baseUrl}/admin/users?email=${encodeURIComponent(person.slice(0, 12))}`, 'users');
  await Promise.all([page.waitForNavigation(), page.click(`a:has-text("${person}")`)]);
  assert.match(page.url(), /\/admin\/users\/usr_/);
  const personId = page.url().match(/(usr_[0-9a-z]+)/)[1];
  assert.match(await page.textContent('main'), /Browser sessions/);
  assert.ok(!(await page.textContent('main')).includes('No live browser session'), 'the session is listed');
  await audit(page, 'user');
  await shot(page, 'user');
  await press(page, 'Sign out everywhere and revoke all tokens');
  assert.match(page.url(), /revoked=1/);
  assert.match(await page.textContent('main'), /No live browser session/);
  const again = await b.follow(await authorizeUrl());
  assert.match(again.url, /\/oauth\/login\?/, 'the user must sign in again');

  // API clients: the secret once, and it works.
  await visit(`${baseUrl}/admin/clients`, 'clients');
  await page.fill('#f-client_name', `Sync ${u}`);
  await page.check('input[name=scope][value="users:read"]');
  await press(page, 'Create API client');
  const apiClientId = (await page.textContent('[data-copy="client ID"]')).trim();
  const apiSecret = (await page.textContent('[data-copy="client secret"]')).trim();
  const tokenRes = await fetch(`${baseUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${apiClientId}:${apiSecret}`).toString('base64')}` },
    body: 'grant_type=client_credentials&scope=users%3Aread' });
  assert.equal(tokenRes.status, 200, 'the new client gets a token');
  await page.goto(`${baseUrl}/admin/clients`);
  assert.ok(!(await page.content()).includes(apiSecret), 'the secret is shown only once');

  // Webhooks: the secret once; the endpoint's page with its delivery log.
  await visit(`${baseUrl}/admin/webhooks`, 'webhooks');
  // A loopback port that refuses at once (local mode allows plain http there).
  await page.fill('#f-url', 'http://127.0.0.1:9/portcullis-hook');
  await press(page, 'Add endpoint');
  assert.match(await page.textContent('[data-copy="signing secret"]'), /^\s*whsec_/);
  await audit(page, 'webhook');
  await shot(page, 'webhook');

  // Replay: one delivery, then every delivery since a time (after the confirmation); each is a
  // webhook.replayed event naming the administrator. Without the CSRF token nothing is queued.
  const webhookId = (await page.textContent('main')).match(/wh_[0-9a-z]+/)[0];
  const since = new Date(Date.now() - 60e3).toISOString().slice(0, 16);  // datetime-local, UTC
  await createUser({ email: `hooked-${u}@example.com` });  // user.created: a delivery to the endpoint
  await page.goto(`${baseUrl}/admin/webhooks/${webhookId}`);
  await audit(page, 'webhook and its delivery log');
  assert.match(await page.textContent('main'), /evt_/, 'the delivery log lists the delivery');
  await Promise.all([page.waitForNavigation(), page.click('form[action$="/replay"] button:text-is("Replay")')]);
  assert.match(page.url(), /\?replayed=1$/);
  assert.match(await page.textContent('main'), /1 delivery was queued again/);
  const forged = await context.request.post(`${baseUrl}/admin/webhooks/${webhookId}/replay`, { form: { since }, maxRedirects: 0 });
  assert.equal(forged.status(), 403, 'a replay without the CSRF token is refused');
  await page.fill('#f-since', since);
  let confirmed = '';
  page.once('dialog', (d) => { confirmed = d.message(); });
  await press(page, 'Replay since');
  assert.match(confirmed, /Queue every delivery of the events since this time again\?/);
  const queued = Number(new URL(page.url()).searchParams.get('replayed'));
  assert.ok(queued >= 1, page.url());
  assert.match(await page.textContent('main'), new RegExp(`${queued} deliver(y|ies) (was|were) queued again`));
  const replays = (await api('GET', '/api/v1/events?types=webhook.replayed&page_size=100')).json.events
    .filter((e) => e.data.webhook_id === webhookId);
  assert.deepEqual(replays.map((e) => [e.data.since, e.data.queued, e.data.by]),
    [[`${since}:00Z`, queued, me.id], [undefined, 1, me.id]]);
  assert.match(replays[1].data.delivery_id, /^msg_/);

  await press(page, 'Delete endpoint');
  assert.match(page.url(), /\/admin\/webhooks\?deleted=1$/);

  // Everything above is in the events, with the administrator as actor.
  await visit(`${baseUrl}/admin/events?user_id=${personId}`, 'events');
  assert.match(await page.textContent('main'), /user\.sessions\.revoked/);
  for (const [type, query] of [['resource.created', `resource_id=${resourceId}`], ['client.deleted', `resource_id=${resourceId}`],
    ['organization.created', `organization_id=${orgId}`], ['domain.created', `organization_id=${orgId}`],
    ['domain.verified', `organization_id=${orgId}`], ['connection.created', `organization_id=${orgId}`],
    ['connection.activated', `organization_id=${orgId}`], ['directory.created', `organization_id=${orgId}`],
    ['user.sessions.revoked', `user_id=${personId}`]]) {
    const found = await apiEvents(type, query);
    assert.equal(found.length >= 1, true, `${type} recorded`);
    assert.equal(found[0].data.by, me.id, `${type} names the administrator`);
  }
  await page.goto(`${baseUrl}/admin/events?types=domain.verified&organization_id=${orgId}`);
  assert.match(await page.textContent('main'), new RegExp(domain.replace(/\./g, '\\.')));
  await context.close();
});

test("an organization administrator manages their organization and cannot reach another's", async () => {
  const mine = await createOrg();
  const theirs = await createOrg();
  const theirDomain = await api('POST', `/api/v1/organizations/${theirs.id}/domains`, { json: { domain: `other-${unique()}.example.com` } });
  assert.equal(theirDomain.status, 201);
  const orgAdmin = await createUser();
  await addMember(mine.id, orgAdmin.id, { roles: [{ name: 'admin' }], metadata: {} });
  const { browser: b, page } = await scriptedSignIn(orgAdmin.email);
  const csrf = page.html.match(/name="csrf" value="([^"]+)"/)[1];
  assert.equal((await b.request(`${baseUrl}/admin/organizations/${mine.id}`)).status, 200);
  // A form without the CSRF token changes nothing.
  const forged = await b.request(`${baseUrl}/admin/organizations/${mine.id}/domains`, { method: 'POST', form: { domain: `forged-${unique()}.example.com` } });
  assert.equal(forged.status, 403);
  assert.match(forged.html, /This form has expired/);
  assert.equal((await api('GET', `/api/v1/organizations/${mine.id}/domains`)).json.domains.length, 0);
  for (const url of [`/admin/organizations/${theirs.id}`, `/admin/organizations/${theirs.id}/domains/${theirDomain.json.id}`,
    `/admin/events?organization_id=${theirs.id}`]) {
    assert.equal((await b.request(baseUrl + url)).status, 404, url);
  }
  const post = await b.request(`${baseUrl}/admin/organizations/${theirs.id}/domains`, { method: 'POST', form: { csrf, domain: `x-${unique()}.example.com` } });
  assert.equal(post.status, 404);
  assert.equal((await api('GET', `/api/v1/organizations/${theirs.id}/domains`)).json.domains.length, 1, 'nothing was added');
  // Their own organization: a domain is added; marking it verified without DNS is refused.
  const added = await b.request(`${baseUrl}/admin/organizations/${mine.id}/domains`, { method: 'POST', form: { csrf, domain: `mine-${unique()}.example.com` } });
  assert.equal(added.status, 303);
  const domainId = added.location.match(/(dom_[0-9a-z]+)/)[1];
  const byWord = await b.request(`${baseUrl}/admin/organizations/${mine.id}/domains/${domainId}/verify`, { method: 'POST', form: { csrf, method: 'admin' } });
  assert.equal(byWord.status, 403);
  const created = await eventsOf('domain.created', 'organization_id', mine.id);
  assert.equal(created[0].data.by, orgAdmin.id);
  for (const url of ['/admin/resources', '/admin/users', '/admin/clients', '/admin/webhooks']) {
    assert.equal((await b.request(baseUrl + url)).status, 403, url);
  }
});
