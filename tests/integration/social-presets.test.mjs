// Social login presets (issue 14): Google and Microsoft (OpenID Connect) and GitHub (OAuth 2.0)
// against local providers shaped like them, each through the whole MCP flow in headless
// Chromium, and their e-mail rules:
//  - Google: email_verified false never links;
//  - Microsoft (multi-tenant): discovery's issuer holds {tenantid} and each ID token's iss must
//    carry its own tid; the nOAuth guard: an `email` without xms_edov (any tenant's
//    administrator can type any address there) never links, a personal account's does;
//  - GitHub: only the address /user/emails marks primary and verified, never /user's public one.
//
// The providers serve HTTPS on loopback (the stack's port + 12 Microsoft-shaped, + 13
// GitHub-shaped, + 14 Google-shaped; scripts/test allows them past the SSRF guard). Their
// sign-in page is a plain HTML form, as the real ones are to a person.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { chromium } from 'playwright-core';
import { baseUrl, sleep, dbQuery } from './harness.mjs';
import { api, unique } from './management.mjs';
import { mcpUrl, resourceId, CHROMIUM_ARGS, hasSession, listenTls, closeAll, authorizeInBrowser } from './sso-fixtures.mjs';
import { Browser } from './browser.mjs';
import { connect, withAuth } from './sdk-client.mjs';
import { ChromiumProvider } from './chromium-signin.mjs';

const CHROMIUM = process.env.PORTCULLIS_CHROMIUM ?? '/usr/bin/chromium';
const stackPort = Number(new URL(baseUrl).port);
const CALLBACK = `${baseUrl}/sso/social/callback`;
const CONSUMER_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';

const servers = [];
const created = [];
let context;
let userDataDir;

const listen = (port, handler) => listenTls(servers, port, handler);

async function readForm(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}

const json = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

// The provider's sign-in page: the authorization request's parameters kept in hidden fields,
// an account name to type, one button. Its POST answers with the redirect back and a code.
function signInPage(res, query) {
  const hidden = [...query].map(([k, v]) => `<input type="hidden" name="${k}" value="${v.replaceAll('"', '&quot;')}">`).join('');
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(`<!doctype html><title>Provider</title><form method="post">${hidden}<label>Account <input name="login"></label><button type="submit">Sign in</button></form>`);
}

async function authorize(req, res, url, provider) {
  if (req.method === 'GET') return signInPage(res, url.searchParams);
  const form = await readForm(req);
  assert.equal(form.get('client_id'), provider.clientId);
  const code = randomBytes(12).toString('hex');
  provider.codes.set(code, { login: form.get('login'), nonce: form.get('nonce'), challenge: form.get('code_challenge'), redirect: form.get('redirect_uri') });
  const back = new URL(form.get('redirect_uri'));
  back.searchParams.set('code', code);
  back.searchParams.set('state', form.get('state'));
  res.writeHead(303, { location: back.href }).end();
}

// Checks the code, the redirect URI and the PKCE verifier; the pending sign-in or undefined.
function redeem(provider, form) {
  const pending = provider.codes.get(form.get('code'));
  provider.codes.delete(form.get('code'));
  if (!pending || form.get('redirect_uri') !== pending.redirect) return undefined;
  if (createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') !== pending.challenge) return undefined;
  return pending;
}

// --- OpenID Connect providers shaped like Google and Microsoft (ID tokens signed with jose) ----

// accounts: login → claims (sub, email, email_verified / tid, xms_edov, …)
async function startOidcShaped(port, { issuer, discoveryPath, discoveryIssuer, tokenIssuer }) {
  const p = { port, clientId: `client-${port}`, secret: randomBytes(16).toString('hex'), codes: new Map(), accounts: new Map() };
  const base = `https://127.0.0.1:${port}`;
  p.issuer = issuer(base);
  p.key = await generateKeyPair('RS256');
  const jwks = { keys: [{ ...(await exportJWK(p.key.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] };
  await listen(port, async (req, res) => {
    const url = new URL(req.url, base);
    if (url.pathname === discoveryPath) {
      return json(res, 200, { issuer: discoveryIssuer(base), authorization_endpoint: `${base}/authorize`, token_endpoint: `${base}/token`,
        jwks_uri: `${base}/keys`, userinfo_endpoint: `${base}/userinfo`, response_types_supported: ['code'],
        subject_types_supported: ['pairwise'], id_token_signing_alg_values_supported: ['RS256'] });
    }
    if (url.pathname === '/keys') return json(res, 200, jwks);
    if (url.pathname === '/authorize') return authorize(req, res, url, p);
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = await readForm(req);
      if (req.headers.authorization !== `Basic ${Buffer.from(`${p.clientId}:${p.secret}`).toString('base64')}`) return json(res, 401, { error: 'invalid_client' });
      const pending = redeem(p, form);
      if (!pending) return json(res, 400, { error: 'invalid_grant' });
      const account = p.accounts.get(pending.login) ?? {};
      const now = Math.floor(Date.now() / 1000);
      const claims = { aud: p.clientId, nonce: pending.nonce, iat: now, exp: now + 300, ...account };
      claims.iss ??= tokenIssuer(base, claims);
      const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(p.key.privateKey);
      return json(res, 200, { access_token: `at-${randomBytes(6).toString('hex')}`, token_type: 'Bearer', id_token: idToken });
    }
    if (url.pathname === '/userinfo') return json(res, 200, {});
    res.writeHead(404).end();
  });
  return p;
}

// --- An OAuth 2.0 provider shaped like GitHub --------------------------------------------------

async function startGitHubShaped(port) {
  const p = { port, clientId: `gh-${port}`, secret: randomBytes(16).toString('hex'), codes: new Map(), tokens: new Map(), accounts: new Map() };
  p.base = `https://127.0.0.1:${port}`;
  await listen(port, async (req, res) => {
    const url = new URL(req.url, p.base);
    if (url.pathname === '/login/oauth/authorize') return authorize(req, res, url, p);
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') {
      const form = await readForm(req);
      // GitHub answers form-encoded unless asked for JSON; it takes the secret in the body.
      if (!/application\/json/.test(req.headers.accept ?? '')) return res.writeHead(406).end();
      if (form.get('client_id') !== p.clientId || form.get('client_secret') !== p.secret) return json(res, 200, { error: 'incorrect_client_credentials' });
      const pending = redeem(p, form);
      if (!pending) return json(res, 200, { error: 'bad_verification_code' });
      const token = `gho_${randomBytes(8).toString('hex')}`;
      p.tokens.set(token, p.accounts.get(pending.login));
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
    }
    const account = p.tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (!account) return json(res, 401, { message: 'Bad credentials' });
    if (url.pathname === '/user') return json(res, 200, account.user);
    if (url.pathname === '/user/emails') return json(res, 200, account.emails);
    res.writeHead(404).end();
  });
  return p;
}

let google;
let microsoft;
let github;

before(async () => {
  google = await startOidcShaped(stackPort + 14, {
    issuer: (b) => b, discoveryPath: '/.well-known/openid-configuration', discoveryIssuer: (b) => b, tokenIssuer: (b) => b,
  });
  microsoft = await startOidcShaped(stackPort + 12, {
    issuer: (b) => `${b}/common/v2.0`, discoveryPath: '/common/v2.0/.well-known/openid-configuration',
    discoveryIssuer: (b) => `${b}/{tenantid}/v2.0`, tokenIssuer: (b, claims) => `${b}/${claims.tid}/v2.0`,
  });
  github = await startGitHubShaped(stackPort + 13);
  userDataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-chromium-presets-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, ignoreHTTPSErrors: true, args: CHROMIUM_ARGS });
});

after(async () => {
  for (const id of created) await api('DELETE', `/api/v1/social_connections/${id}`);
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  await closeAll(servers);
});

async function socialConnection(body) {
  const r = await api('POST', '/api/v1/social_connections', { json: { name: `${body.provider} ${unique()}`, ...body } });
  assert.equal(r.status, 201, r.text);
  created.push(r.json.id);
  return r.json;
}

// The whole MCP flow in Chromium: the login page's button for `connection`, the provider's
// form with `login`, consent. Returns whoami's answer.
async function chromiumSignIn(connection, login, providerOrigin) {
  await context.clearCookies();  // a new person: no session from the previous test's sign-in
  const issuer = `${baseUrl}/resources/${resourceId}`;
  const button = `a:has-text("Continue with ${connection.name}")`;
  const provider = new ChromiumProvider(context, login, async (page, here) => {
    if (here.startsWith(providerOrigin) && (await page.$('input[name=login]'))) {
      await page.fill('input[name=login]', login);
      await page.click('button[type=submit]');
    } else if (here.startsWith(`${baseUrl}/oauth/login`) && (await page.$(button))) {
      await page.click(button);
    } else {
      return false;
    }
    return true;
  }, { issuer: () => issuer, grantTypes: ['authorization_code'] });
  const session = await connect(mcpUrl, provider);
  const route = provider.route(baseUrl);
  // (The 303 hops, /sso/social/start and the callback, are not pages the frame shows.)
  for (const step of ['/oauth/login', providerOrigin, '/oauth/consent']) assert.ok(route.includes(step), `${step} in ${route.join(' → ')}`);
  const me = JSON.parse((await withAuth(provider, session, () => session.client.callTool({ name: 'whoami', arguments: {} }))).content[0].text);
  await session.client.close();
  return me;
}

// Without Chromium: /oauth/authorize with connection_id=soc_… straight to the provider, which
// signs `login` in at once (as its form would), and the callback; returns the callback's answer.
async function httpSignIn(browser, connection, provider, login) {
  const to = await authorizeInBrowser(browser, { connection_id: connection.id });
  assert.equal(to.status, 303, to.html.slice(0, 300));
  const q = new URL(to.location).searchParams;
  assert.equal(q.get('client_id'), provider.clientId);
  const code = randomBytes(12).toString('hex');
  provider.codes.set(code, { login, nonce: q.get('nonce'), challenge: q.get('code_challenge'), redirect: q.get('redirect_uri') });
  return browser.request(`${q.get('redirect_uri')}?code=${code}&state=${encodeURIComponent(q.get('state'))}`);
}

// The reason of a user.login.failed event of this connection, once one with `reason` exists
// (events are written after the response).
async function failureReason(connectionId, reason) {
  for (let i = 0; i < 40; i++) {
    const rows = dbQuery(`SELECT data FROM events WHERE type = 'user.login.failed' AND data LIKE '%${connectionId}%'`);
    if (rows.some(([d]) => JSON.parse(d).reason === reason)) return reason;
    await sleep(100);
  }
  return undefined;
}

const identitiesOf = async (userId) => ((await api('GET', `/api/v1/users/${userId}`)).json.identities ?? []).map((i) => [i.provider, i.subject]);

test('Google preset: Chromium through the whole MCP flow; email_verified false never links', async () => {
  const connection = await socialConnection({ provider: 'google', client_id: google.clientId, client_secret: google.secret, issuer: google.issuer });
  assert.deepEqual(connection.scopes, ['openid', 'email', 'profile']);
  const email = `gina.${unique()}@gmail.com`;
  const sub = String(100000000000000000000n + BigInt(Number.parseInt(unique(), 16)));
  google.accounts.set(email, { sub, email, email_verified: true, given_name: 'Gina', family_name: 'Google' });
  const me = await chromiumSignIn(connection, email, google.issuer);
  assert.equal(me.email, email);
  assert.deepEqual(await identitiesOf(me.sub), [['google', sub]]);

  const victim = await api('POST', '/api/v1/users', { json: { email: `vic.${unique()}@gmail.com` } });
  google.accounts.set('eve', { sub: `eve-${unique()}`, email: victim.json.email, email_verified: false });
  const eve = new Browser();
  const r = await httpSignIn(eve, connection, google, 'eve');
  assert.equal(r.status, 403, r.html.slice(0, 300));
  assert.ok(!hasSession(eve));
  assert.equal(await failureReason(connection.id, 'email_not_verified'), 'email_not_verified');
  assert.deepEqual(await identitiesOf(victim.json.id), []);
});

test('Microsoft preset: {tenantid} issuer checked against tid; nOAuth guard: email without xms_edov never links', async () => {
  const connection = await socialConnection({ provider: 'microsoft', client_id: microsoft.clientId, client_secret: microsoft.secret, issuer: microsoft.issuer });
  const tenant = randomUUID();
  const email = `mo.${unique()}@contoso-${unique()}.com`;
  microsoft.accounts.set(email, { sub: `ms-${unique()}`, tid: tenant, email, xms_edov: true, given_name: 'Mo', family_name: 'Soft' });
  const me = await chromiumSignIn(connection, email, `https://127.0.0.1:${microsoft.port}`);
  assert.equal(me.email, email);
  assert.equal((await identitiesOf(me.sub))[0][0], 'microsoft');

  // nOAuth: an attacker's tenant sets the victim's address as the `email` of its own user.
  const victim = await api('POST', '/api/v1/users', { json: { email: `ceo.${unique()}@contoso-${unique()}.com` } });
  for (const [name, claims] of [['no-edov', {}], ['edov-false', { xms_edov: false }], ['edov-string-false', { xms_edov: 'false' }]]) {
    microsoft.accounts.set(name, { sub: `att-${unique()}`, tid: randomUUID(), email: victim.json.email, ...claims });
    const attacker = new Browser();
    const r = await httpSignIn(attacker, connection, microsoft, name);
    assert.equal(r.status, 403, `${name}: ${r.html.slice(0, 300)}`);
    assert.ok(!hasSession(attacker), name);
    assert.equal(await failureReason(connection.id, 'email_not_verified'), 'email_not_verified', name);
  }
  assert.deepEqual(await identitiesOf(victim.json.id), []);

  // A personal Microsoft account: Microsoft verified its address.
  const personal = `pat.${unique()}@outlook.com`;
  microsoft.accounts.set(personal, { sub: `msa-${unique()}`, tid: CONSUMER_TENANT, email: personal });
  const p = new Browser();
  assert.equal((await httpSignIn(p, connection, microsoft, personal)).status, 303);
  assert.ok(hasSession(p));

  // An ID token whose iss names another tenant than its tid.
  microsoft.accounts.set('mixed', { sub: `mx-${unique()}`, tid: randomUUID(), iss: `https://127.0.0.1:${microsoft.port}/${randomUUID()}/v2.0`, email: `mx.${unique()}@x.com`, xms_edov: true });
  const mixed = new Browser();
  assert.equal((await httpSignIn(mixed, connection, microsoft, 'mixed')).status, 403);
  assert.equal(await failureReason(connection.id, 'wrong_issuer'), 'wrong_issuer');
});

test('GitHub preset: Chromium through the whole MCP flow; only the primary verified address of /user/emails', async () => {
  const connection = await socialConnection({ provider: 'github', client_id: github.clientId, client_secret: github.secret,
    authorization_endpoint: `${github.base}/login/oauth/authorize`, token_endpoint: `${github.base}/login/oauth/access_token`,
    userinfo_endpoint: `${github.base}/user`, emails_endpoint: `${github.base}/user/emails` });
  assert.deepEqual(connection.scopes, ['read:user', 'user:email']);
  const victim = await api('POST', '/api/v1/users', { json: { email: `vic.${unique()}@example.com` } });
  const email = `octo.${unique()}@example.com`;
  const id = 5000000 + Number.parseInt(unique().slice(0, 5), 16);
  github.accounts.set('octocat', {
    // The public profile address is chosen freely: the victim's here. It must not count.
    user: { id, login: 'octocat', name: 'Mona Octocat', email: victim.json.email },
    emails: [{ email: victim.json.email, primary: false, verified: false }, { email: `old.${unique()}@example.com`, primary: false, verified: true },
      { email, primary: true, verified: true }],
  });
  const me = await chromiumSignIn(connection, 'octocat', github.base);
  assert.equal(me.email, email);
  assert.deepEqual(await identitiesOf(me.sub), [['github', String(id)]]);
  const user = await api('GET', `/api/v1/users/${me.sub}`);
  assert.equal(user.json.given_name, 'Mona');
  assert.equal(user.json.family_name, 'Octocat');

  // Primary but unverified, or verified but not primary: no address GitHub vouches for.
  github.accounts.set('mallory', { user: { id: id + 1, login: 'mallory', email: victim.json.email },
    emails: [{ email: victim.json.email, primary: true, verified: false }, { email: `m.${unique()}@example.com`, primary: false, verified: true }] });
  const mallory = new Browser();
  const r = await httpSignIn(mallory, connection, github, 'mallory');
  assert.equal(r.status, 403, r.html.slice(0, 300));
  assert.ok(!hasSession(mallory));
  assert.equal(await failureReason(connection.id, 'email_not_verified'), 'email_not_verified');
  assert.deepEqual(await identitiesOf(victim.json.id), []);
});
