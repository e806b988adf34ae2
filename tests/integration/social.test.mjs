// Social login (issue 14, contract §7 social connections, §10): the social connections API; a
// whole MCP sign-in in headless Chromium that clicks "Continue with …" on the login page and
// signs in at npm `oidc-provider` as a generic OIDC provider, the account linking to the user
// who already owned the address (identities on the user object); and, against an OAuth 2.0
// provider of the test's own, the state checks (another browser, unknown, used twice) and an
// unverified e-mail that must never link to the existing user.
//
// The providers serve HTTPS on loopback (the stack's port + 10 and + 11, which scripts/test
// puts in PORTCULLIS_OUTBOUND_ALLOW_HOSTS) with the run's test certificate.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import Provider from 'oidc-provider';
import { chromium } from 'playwright-core';
import { baseUrl, sleep, dbQuery } from './harness.mjs';
import { api, unique, tokenWithScopes } from './management.mjs';
import { mcpUrl, resourceId, CHROMIUM_ARGS, hasSession, listenTls, closeAll, authorizeInBrowser } from './sso-fixtures.mjs';
import { Browser } from './browser.mjs';
import { connect, withAuth } from './sdk-client.mjs';
import { ChromiumProvider } from './chromium-signin.mjs';

const CHROMIUM = process.env.PORTCULLIS_CHROMIUM ?? '/usr/bin/chromium';
const stackPort = Number(new URL(baseUrl).port);
const CALLBACK = `${baseUrl}/sso/social/callback`;

const servers = [];
const created = [];
let context;
let userDataDir;

const listen = (port, handler) => listenTls(servers, port, handler);

async function socialConnection(body) {
  const r = await api('POST', '/api/v1/social_connections', { json: body });
  assert.equal(r.status, 201, r.text);
  created.push(r.json.id);
  return r.json;
}

// The user.login.failed event of this social connection whose reason is `reason`.
async function failureEvent(connectionId, reason) {
  for (let i = 0; i < 40; i++) {
    const rows = dbQuery(`SELECT data FROM events WHERE type = 'user.login.failed' AND data LIKE '%${connectionId}%'`);
    const hit = rows.map(([d]) => JSON.parse(d)).find((d) => d.reason === reason);
    if (hit) return hit;
    await sleep(100);
  }
  assert.fail(`no user.login.failed event with reason ${reason} for ${connectionId}`);
}

// /oauth/authorize with connection_id=soc_…: straight to the provider. Returns that redirect,
// parsed (with `page`, whatever the browser ends on).
async function toProvider(browser, connectionId, { page = false } = {}) {
  const r = await authorizeInBrowser(browser, { connection_id: connectionId });
  if (page) return r;
  assert.equal(r.status, 303, `${r.url}: ${r.html.slice(0, 500)}`);
  return new URL(r.location);
}

// --- A generic OIDC provider: npm oidc-provider -------------------------------------------------

const op = { port: stackPort + 10, clientId: 'portcullis-social', secret: randomBytes(16).toString('hex') };
op.issuer = `https://127.0.0.1:${op.port}`;

async function startOidcProvider() {
  const provider = new Provider(op.issuer, {
    clients: [{ client_id: op.clientId, client_secret: op.secret, redirect_uris: [CALLBACK],
      grant_types: ['authorization_code'], response_types: ['code'] }],
    async findAccount(ctx, sub) {
      return { accountId: sub, async claims() { return { sub, email: sub, email_verified: true, given_name: 'Grace', family_name: 'Hopper' }; } };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name'] },
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    features: { devInteractions: { enabled: true } },
  });
  await listen(op.port, provider.callback());
}

// --- An OAuth 2.0 provider of the test's own (token + userinfo) -------------------------------

const fake = { port: stackPort + 11, clientId: 'oauth2-client', secret: randomBytes(16).toString('hex'), codes: new Map(), tokens: new Map(), tokenCalls: 0 };
fake.base = `https://127.0.0.1:${fake.port}`;

async function startOAuth2Provider() {
  await listen(fake.port, async (req, res) => {
    const url = new URL(req.url, fake.base);
    const json = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/token' && req.method === 'POST') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      fake.tokenCalls++;
      // The client authenticates in the body (client_secret_post) or with Basic (RFC 6749
      // §2.3.1: both parts form-encoded), never both.
      let [id, secret] = [form.get('client_id'), form.get('client_secret')];
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      fake.lastAuth = basic ? 'basic' : 'post';
      if (basic) {
        if (secret !== null) return json(400, { error: 'invalid_request', error_description: 'two authentication methods' });
        [id, secret] = Buffer.from(basic[1], 'base64').toString().split(':').map((p) => decodeURIComponent(p.replaceAll('+', ' ')));
      }
      if (id !== fake.clientId || secret !== fake.secret) return json(401, { error: 'invalid_client' });
      const pending = fake.codes.get(form.get('code'));
      fake.codes.delete(form.get('code'));
      if (!pending || form.get('redirect_uri') !== CALLBACK) return json(400, { error: 'invalid_grant' });
      if (createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') !== pending.challenge) {
        return json(400, { error: 'invalid_grant', error_description: 'PKCE' });
      }
      const token = 'at-' + randomBytes(8).toString('hex');
      fake.tokens.set(token, pending.profile);
      return json(200, { access_token: token, token_type: 'bearer' });
    }
    if (url.pathname === '/userinfo') {
      const profile = fake.tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      return profile ? json(200, profile) : json(401, { error: 'invalid_token' });
    }
    res.writeHead(404).end();
  });
}

// As far as the provider's authorization endpoint; returns the callback URL the provider would
// send the browser back to, having parked `profile` behind a fresh code.
async function toFakeProvider(browser, connectionId, profile) {
  const to = await toProvider(browser, connectionId);
  assert.equal(to.origin + to.pathname, `${fake.base}/authorize`, to.href);
  assert.equal(to.searchParams.get('client_id'), fake.clientId);
  assert.equal(to.searchParams.get('redirect_uri'), CALLBACK);
  assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
  const code = randomBytes(12).toString('hex');
  fake.codes.set(code, { challenge: to.searchParams.get('code_challenge'), profile });
  return `${CALLBACK}?code=${code}&state=${encodeURIComponent(to.searchParams.get('state'))}`;
}

before(async () => {
  await startOidcProvider();
  await startOAuth2Provider();
});

after(async () => {
  // Social connections are the environment's: leave the login page as the other tests know it.
  for (const id of created) await api('DELETE', `/api/v1/social_connections/${id}`);
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  await closeAll(servers);
});

test('social connections API: create, read, list, secret sealed and never returned, presets, bad bodies, scopes, events, delete', async () => {
  const secret = `sekrit-${randomBytes(12).toString('hex')}`;
  const c = await socialConnection({ provider: 'oidc', name: 'Acme ID', issuer: op.issuer, client_id: op.clientId, client_secret: secret, enabled: false });
  assert.match(c.id, /^soc_/);
  assert.equal(c.provider, 'oidc');
  assert.equal(c.enabled, false);
  assert.deepEqual(c.scopes, ['openid', 'email', 'profile']);
  assert.equal(c.client_secret_set, true);
  assert.equal(c.redirect_uri, CALLBACK);
  const [[hex]] = dbQuery(`SELECT HEX(secret_sealed) FROM social_connections WHERE id = '${c.id}'`);
  assert.ok(hex.length > 2 * secret.length, 'nonce + ciphertext + tag');
  assert.ok(!Buffer.from(hex, 'hex').toString('latin1').includes(secret), 'sealed at rest');

  const got = await api('GET', `/api/v1/social_connections/${c.id}`);
  assert.equal(got.status, 200);
  assert.ok(!got.text.includes(secret), 'the secret is never returned');
  const list = await api('GET', '/api/v1/social_connections?page_size=100');
  assert.ok(list.json.social_connections.some((x) => x.id === c.id));
  assert.ok(!list.text.includes(secret));

  // Presets fill the provider's URLs.
  const google = await socialConnection({ provider: 'google', client_id: 'g', client_secret: 's', enabled: false });
  assert.equal(google.issuer, 'https://accounts.google.com');
  assert.equal(google.name, 'Google');
  const github = await socialConnection({ provider: 'github', client_id: 'gh', client_secret: 's', enabled: false });
  assert.equal(github.token_endpoint, 'https://github.com/login/oauth/access_token');
  assert.equal(github.emails_endpoint, 'https://api.github.com/user/emails');
  const ms = await socialConnection({ provider: 'microsoft', client_id: 'm', client_secret: 's', enabled: false });
  assert.equal(ms.issuer, 'https://login.microsoftonline.com/common/v2.0');

  for (const body of [{ provider: 'myspace', client_id: 'a', client_secret: 'b' }, { provider: 'oidc', client_id: 'a', client_secret: 'b' },
    { provider: 'oidc', issuer: 'http://idp.example.com', client_id: 'a', client_secret: 'b' }, { provider: 'oidc', issuer: op.issuer, client_id: 'a' },
    { provider: 'oauth2', client_id: 'a', client_secret: 'b', token_endpoint: `${fake.base}/token` },
    { provider: 'google', client_id: 'a', client_secret: 'b', color: 'red' }, { provider: 'oidc', issuer: op.issuer, client_id: 'a', client_secret: 'b', scopes: ['email'] }]) {
    const r = await api('POST', '/api/v1/social_connections', { json: body });
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.equal(r.json.code, 'invalid_argument');
  }
  assert.equal((await api('PATCH', `/api/v1/social_connections/${c.id}`, { json: { provider: 'google' } })).status, 400);
  const renamed = await api('PATCH', `/api/v1/social_connections/${c.id}`, { json: { name: 'Acme ID (prod)', client_secret: 'rotated' } });
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.json.name, 'Acme ID (prod)');
  assert.ok(!renamed.text.includes('rotated'));

  // resources:write is needed, even to read (a connection decides who signs in).
  const reader = await tokenWithScopes(['resources:read', 'organizations:write']);
  assert.equal((await api('GET', '/api/v1/social_connections', { token: reader })).status, 403);
  assert.equal((await api('GET', '/api/v1/social_connections', { token: null })).status, 401);
  assert.equal((await api('GET', '/api/v1/social_connections/soc_nope')).status, 404);

  const del = await api('DELETE', `/api/v1/social_connections/${c.id}`);
  assert.equal(del.status, 204);
  assert.equal((await api('GET', `/api/v1/social_connections/${c.id}`)).status, 404);
  await sleep(300);
  const types = dbQuery(`SELECT type FROM events WHERE type LIKE 'social_connection.%' AND data LIKE '%${c.id}%'`).map(([t]) => t);
  for (const t of ['social_connection.created', 'social_connection.updated', 'social_connection.deleted']) assert.ok(types.includes(t), `${t} in ${types}`);
});

test('Chromium, whole MCP flow: login page offers "Continue with …", generic OIDC at oidc-provider, consent, token, whoami; the account links to the existing user', async () => {
  const connection = await socialConnection({ provider: 'oidc', name: `Acme ${unique()}`, issuer: op.issuer, client_id: op.clientId, client_secret: op.secret });
  const email = `grace.${unique()}@example.com`;
  const existing = await api('POST', '/api/v1/users', { json: { email, given_name: 'Known' } });
  assert.equal(existing.status, 201, existing.text);

  userDataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-chromium-social-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, ignoreHTTPSErrors: true, args: CHROMIUM_ARGS });
  const issuer = `${baseUrl}/resources/${resourceId}`;
  const button = `a:has-text("Continue with ${connection.name}")`;
  const provider = new ChromiumProvider(context, email, async (page, here) => {
    if (here.startsWith(op.issuer) && (await page.$('input[name=login]'))) {
      await page.fill('input[name=login]', email);
      await page.fill('input[name=password]', 'any password');
      await page.click('button[type=submit]');
    } else if (here.startsWith(op.issuer) && (await page.$('button[type=submit]'))) {
      await page.click('button[type=submit]');  // the provider's own consent prompt
    } else if (here.startsWith(`${baseUrl}/oauth/login`) && (await page.$(button))) {
      // Keyboard, as a person without a mouse would: the button is a focusable link.
      await page.focus(button);
      await page.keyboard.press('Enter');
    } else {
      return false;
    }
    return true;
  }, { issuer: () => issuer, grantTypes: ['authorization_code'] });
  const session = await connect(mcpUrl, provider);
  const route = provider.route(baseUrl);
  // (The 303 hops, /sso/social/start and the callback, are not pages the frame shows.)
  for (const step of ['/oauth/login', op.issuer, '/oauth/consent']) assert.ok(route.includes(step), `${step} in ${route.join(' → ')}`);
  // The login page: the e-mail form still there (contract §12), the client's name shown.
  const loginPage = provider.pages.get('/oauth/login');
  assert.match(loginPage, /input[^>]+name="email"/);
  assert.match(loginPage, /MCP SDK e2e/);

  const me = JSON.parse((await withAuth(provider, session, () => session.client.callTool({ name: 'whoami', arguments: {} }))).content[0].text);
  await session.client.close();
  assert.equal(me.sub, existing.json.id, 'linked to the user who owned the verified address, not a new one');
  assert.equal(dbQuery(`SELECT COUNT(*) FROM users WHERE email = '${email}'`)[0][0], '1');

  const user = await api('GET', `/api/v1/users/${me.sub}`);
  assert.equal(user.status, 200);
  assert.deepEqual(user.json.identities.map(({ provider: p, subject, connection_id: cid }) => ({ p, subject, cid })),
    [{ p: 'oidc', subject: email, cid: connection.id }]);
  assert.equal(user.json.given_name, 'Known', 'never overwritten by the provider');
  assert.equal(user.json.family_name, 'Hopper', 'filled in where the user had none');
  // The listing carries them too (the user is on some page: the suite has made many users).
  let listed;
  let token = '';
  do {
    const page = await api('GET', `/api/v1/users?page_size=100${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
    listed = page.json.users.find((u) => u.id === me.sub);
    token = page.json.next_page_token;
  } while (!listed && token);
  assert.equal(listed?.identities?.length, 1);

  let succeeded;
  for (let i = 0; i < 40 && !succeeded; i++) {
    succeeded = dbQuery(`SELECT data FROM events WHERE type = 'user.login.succeeded' AND user_id = '${me.sub}'`).map(([d]) => JSON.parse(d))[0];
    if (!succeeded) await sleep(100);
  }
  assert.equal(succeeded?.method, 'social');
  assert.equal(succeeded?.connection_id, connection.id);
  assert.equal(succeeded?.provider, 'oidc');
});

test('state bound to the browser and single use; unverified e-mail never links; an account signs in by its subject', async () => {
  const connection = await socialConnection({ provider: 'oauth2', name: `Fake ${unique()}`, client_id: fake.clientId, client_secret: fake.secret,
    authorization_endpoint: `${fake.base}/authorize`, token_endpoint: `${fake.base}/token`, userinfo_endpoint: `${fake.base}/userinfo`,
    claim_mapping: { subject: 'id', email: 'mail', email_verified: 'mail_verified', given_name: 'first' } });

  // The good case first: proves the harness can succeed, so the failures below mean something.
  const alice = new Browser();
  const aliceEmail = `alice.${unique()}@example.com`;
  const back = await toFakeProvider(alice, connection.id, { id: 1001 + Number.parseInt(unique().slice(0, 6), 16), mail: aliceEmail, mail_verified: true, first: 'Alice' });

  // The provider's answer carried into another browser: refused, and the original stays usable.
  const mallory = new Browser();
  const stolen = await mallory.request(back);
  assert.equal(stolen.status, 403, stolen.html.slice(0, 300));
  assert.match(stolen.html, /Sign-in failed/);
  assert.ok(!hasSession(mallory));
  await failureEvent(connection.id, 'state_other_browser');
  const calls = fake.tokenCalls;
  const mine = await alice.request(back);
  assert.equal(mine.status, 303, mine.html.slice(0, 800));
  assert.equal(fake.lastAuth, 'post', 'the default: client_secret_post');
  assert.match(mine.location, /\/oauth\/consent\?/);
  assert.ok(hasSession(alice), 'signed in');
  assert.equal(fake.tokenCalls, calls + 1, 'the code was redeemed once, by the right browser');
  // Used once.
  const again = await alice.request(back);
  assert.equal(again.status, 403);
  assert.equal(fake.tokenCalls, calls + 1);
  // A state nobody issued.
  const forged = new Browser();
  const f = await forged.request(`${CALLBACK}?code=x&state=${randomBytes(24).toString('base64url')}`);
  assert.equal(f.status, 403);
  assert.ok(!hasSession(forged));
  const [[aliceId]] = dbQuery(`SELECT id FROM users WHERE email = '${aliceEmail}'`);
  assert.equal(dbQuery(`SELECT COUNT(*) FROM user_identities WHERE user_id = '${aliceId}'`)[0][0], '1');

  // An unverified address naming an existing user: never linked, never signed in.
  const victim = await api('POST', '/api/v1/users', { json: { email: `victim.${unique()}@example.com` } });
  assert.equal(victim.status, 201, victim.text);
  const eve = new Browser();
  const unverified = await eve.request(await toFakeProvider(eve, connection.id, { id: 'eve-1', mail: victim.json.email, mail_verified: false }));
  assert.equal(unverified.status, 403, unverified.html.slice(0, 300));
  assert.ok(!hasSession(eve));
  await failureEvent(connection.id, 'email_not_verified');
  assert.equal(dbQuery(`SELECT COUNT(*) FROM user_identities WHERE user_id = '${victim.json.id}'`)[0][0], '0');
  // No e-mail_verified claim at all is not verified either.
  const eve2 = new Browser();
  const absent = await eve2.request(await toFakeProvider(eve2, connection.id, { id: 'eve-2', mail: victim.json.email }));
  assert.equal(absent.status, 403);
  assert.ok(!hasSession(eve2));

  // Once linked, the account signs in by its subject, whatever address it claims now.
  const bob = new Browser();
  const bobEmail = `bob.${unique()}@example.com`;
  const subject = `bob-${unique()}`;
  assert.equal((await bob.request(await toFakeProvider(bob, connection.id, { id: subject, mail: bobEmail, mail_verified: true }))).status, 303);
  const bob2 = new Browser();
  const later = await bob2.request(await toFakeProvider(bob2, connection.id, { id: subject, mail: victim.json.email, mail_verified: false }));
  assert.equal(later.status, 303, later.html.slice(0, 500));
  const [[bobId]] = dbQuery(`SELECT id FROM users WHERE email = '${bobEmail}'`);
  let logins = 0;
  for (let i = 0; i < 40 && logins < 2; i++) {
    logins = Number(dbQuery(`SELECT COUNT(*) FROM events WHERE type = 'user.login.succeeded' AND user_id = '${bobId}'`)[0][0]);
    if (logins < 2) await sleep(100);
  }
  assert.equal(logins, 2, 'both sign-ins are the linked user');

  // A disabled connection: connection_id=soc_… falls back to the login page, which no longer
  // offers it.
  assert.equal((await api('PATCH', `/api/v1/social_connections/${connection.id}`, { json: { enabled: false } })).status, 200);
  const late = await toProvider(new Browser(), connection.id, { page: true });
  assert.equal(late.status, 200, late.html.slice(0, 300));
  assert.match(late.html, /name="email"/);
  assert.ok(!late.html.includes(connection.name));
});

test('an OAuth 2.0 provider that takes client_secret_basic', async () => {
  const connection = await socialConnection({ provider: 'oauth2', name: `Basic ${unique()}`, client_id: fake.clientId, client_secret: fake.secret,
    authorization_endpoint: `${fake.base}/authorize`, token_endpoint: `${fake.base}/token`, userinfo_endpoint: `${fake.base}/userinfo`,
    token_endpoint_auth_method: 'client_secret_basic', claim_mapping: { subject: 'id', email: 'mail', email_verified: 'mail_verified' } });
  assert.equal(connection.token_endpoint_auth_method, 'client_secret_basic');
  const browser = new Browser();
  const email = `basil.${unique()}@example.com`;
  const r = await browser.request(await toFakeProvider(browser, connection.id, { id: `basil-${unique()}`, mail: email, mail_verified: true }));
  assert.equal(r.status, 303, r.html.slice(0, 800));
  assert.equal(fake.lastAuth, 'basic');
  assert.ok(hasSession(browser));
  for (const bad of [{ token_endpoint_auth_method: 'private_key_jwt' }, { token_endpoint_auth_method: 1 }]) {
    const p = await api('PATCH', `/api/v1/social_connections/${connection.id}`, { json: bad });
    assert.equal(p.status, 400, p.text);
  }
  const oidc = await api('POST', '/api/v1/social_connections', { json: { provider: 'google', client_id: 'g', client_secret: 's', token_endpoint_auth_method: 'client_secret_basic' } });
  assert.equal(oidc.status, 400, 'OpenID Connect providers take it from discovery');
  assert.equal((await api('DELETE', `/api/v1/social_connections/${connection.id}`)).status, 204);
});
