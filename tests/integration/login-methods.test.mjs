// Sign-in methods per organization (issue 14 item 3, docs/login.md "Methods per organization"):
// an organization's `login_methods` narrow what the environment offers for every sign-in that
// concerns it — an address in one of its verified domains, or a request naming it — whatever
// method the user tries (an e-mailed code, custom authentication, social login), with a
// user.login.failed event and no session when refused. And the account every method leaves in
// the user's `identities` (an e-mailed code: the address itself).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import httpServer from 'node:http';
import { baseUrl, dbQuery } from './harness.mjs';
import { api, unique, tokenWithScopes, createOrg } from './management.mjs';
import { orgWithDomain, failureEvent, hasSession, authorizeInBrowser } from './sso-fixtures.mjs';
import { Browser, lastMail, signInWithCode } from './browser.mjs';

const ALL_METHODS = ['email', 'social', 'sso', 'custom'];

async function environment(body) {
  const r = await api('PATCH', '/api/v1/environment', { json: body });
  assert.equal(r.status, 200, r.text);
}

async function allow(orgId, methods) {
  const r = await api('PATCH', `/api/v1/organizations/${orgId}`, { json: { login_methods: methods } });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

// The customer's backend for custom authentication: completes every login request as
// `backend.user` and sends the browser on.
const backend = { user: undefined };
let server;

before(async () => {
  backend.token = await tokenWithScopes(['login_requests:write']);
  server = httpServer.createServer(async (req, res) => {
    const id = new URL(req.url, 'http://127.0.0.1').searchParams.get('login_request_id');
    const done = await api('POST', `/api/v1/login_requests/${encodeURIComponent(id)}/complete`,
      { token: backend.token, json: { user: backend.user } });
    if (done.status !== 200) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(done.text);
      return;
    }
    res.writeHead(303, { location: done.json.continue_url }).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  backend.url = `http://127.0.0.1:${server.address().port}/login`;
});

after(async () => {
  await environment({ custom_login_url: '', login_methods: ALL_METHODS });
  server?.closeAllConnections?.();
  await new Promise((r) => (server ? server.close(r) : r()));
});

test('organization login_methods: set, read back, checked, cleared with null', async () => {
  const org = await createOrg();
  assert.equal(org.login_methods, undefined, 'no restriction by default');
  assert.deepEqual((await allow(org.id, ['sso', 'email'])).login_methods, ['sso', 'email']);
  assert.deepEqual((await api('GET', `/api/v1/organizations/${org.id}`)).json.login_methods, ['sso', 'email']);
  for (const bad of [[], ['password'], ['sso', 'sso'], 'sso', [1]]) {
    const r = await api('PATCH', `/api/v1/organizations/${org.id}`, { json: { login_methods: bad } });
    assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${r.text}`);
    assert.match(r.json.message ?? r.text, /login_methods/);
  }
  const cleared = await allow(org.id, null);
  assert.equal(cleared.login_methods, undefined);
  const created = await api('POST', '/api/v1/organizations', { json: { display_name: `Only SSO ${unique()}`, login_methods: ['sso'] } });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json.login_methods, ['sso']);
});

test('an organization that allows only SSO: no e-mailed code for its domain, other addresses unaffected', async () => {
  const { org, domain } = await orgWithDomain('sso-only');
  await allow(org.id, ['sso']);
  const browser = new Browser();
  const page = await authorizeInBrowser(browser, {});
  assert.equal(page.status, 200, page.html.slice(0, 300));
  const email = `ann.${unique()}@${domain}`;
  const refused = await browser.submit(page, 'email', { email });
  assert.equal(refused.status, 403, refused.html.slice(0, 500));
  assert.match(refused.html, /Your organization does not allow signing in with an e-mailed code/);
  await assert.rejects(lastMail(email), /no mail/, 'no code was sent');
  const failed = await failureEvent(org.id, 'method_not_allowed_by_organization');
  assert.equal(failed.email, email);
  assert.equal(hasSession(browser), false);

  // The same page, an address outside the organization's domains: the code goes out.
  const other = `bob.${unique()}@example.com`;
  const after = await signInWithCode(browser, page, other);
  assert.ok(after.location || /name="decision"/.test(after.html), `${after.status}: ${after.html.slice(0, 300)}`);
  assert.equal(hasSession(browser), true);

  // Allowing e-mail again lets the organization's own address in.
  await allow(org.id, ['sso', 'email']);
  const second = new Browser();
  const again = await signInWithCode(second, await authorizeInBrowser(second, {}), email);
  assert.ok(again.location || /name="decision"/.test(again.html), `${again.status}: ${again.html.slice(0, 300)}`);
  assert.equal(hasSession(second), true);
});

test('a request naming the organization offers only its methods; custom authentication cannot bypass them', async () => {
  await environment({ custom_login_url: backend.url, login_methods: ALL_METHODS });
  const { org, domain } = await orgWithDomain('no-custom');
  await allow(org.id, ['email']);
  // The login page of a request naming the organization: no custom button.
  const named = await authorizeInBrowser(new Browser(), { organization_id: org.id });
  assert.equal(named.status, 200, named.html.slice(0, 300));
  assert.doesNotMatch(named.html, /\/oauth\/login\/custom\?/);
  // Without naming it, the button is there; the customer's backend vouches for an address of
  // the organization's domain, and the sign-in is refused at the end, without a session.
  const browser = new Browser();
  const page = await authorizeInBrowser(browser, {});
  const href = page.html.match(/href="(\/oauth\/login\/custom\?[^"]+)"/)?.[1];
  assert.ok(href, page.html.slice(0, 1500));
  const email = `cy.${unique()}@${domain}`;
  backend.user = { email, email_verified: true, external_id: `ext-${unique()}` };
  const end = await browser.follow(new URL(href.replaceAll('&amp;', '&'), baseUrl).href);
  // The redirect leaves Portcullis for the backend, which sends the browser to continue.
  const back = end.location ? await browser.follow(end.location) : end;
  const last = back.location && back.location.startsWith(baseUrl) ? await browser.follow(back.location) : back;
  assert.equal(last.status, 403, `${last.url} ${last.status}: ${last.html.slice(0, 500)}`);
  assert.match(last.html, /Your organization does not allow this way of signing in/);
  assert.equal(hasSession(browser), false);
  const failed = await failureEvent(org.id, 'method_not_allowed_by_organization');
  assert.equal(failed.method, 'custom');
});

test('an e-mailed code leaves the address among the user\'s identities', async () => {
  const browser = new Browser();
  const email = `ida.${unique()}@example.com`;
  const page = await authorizeInBrowser(browser, {});
  const after = await signInWithCode(browser, page, email);
  assert.ok(after.location || /name="decision"/.test(after.html), after.html.slice(0, 300));
  const [[userId]] = dbQuery(`SELECT id FROM users WHERE email = '${email}'`);
  const full = await api('GET', `/api/v1/users/${userId}`);
  assert.equal(full.status, 200, full.text);
  assert.deepEqual(full.json.identities.map((i) => [i.provider, i.subject]), [['email', email]]);
  // A second sign-in adds nothing.
  const second = new Browser();
  await signInWithCode(second, await authorizeInBrowser(second, {}), email);
  const again = await api('GET', `/api/v1/users/${userId}`);
  assert.equal(again.json.identities.length, 1);
});
