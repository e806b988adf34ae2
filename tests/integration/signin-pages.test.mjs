// The sign-in and consent pages in a real browser (headless Debian Chromium through
// playwright-core), through nginx: the stable hooks of contract §12, the e-mail code and link
// flows with the local outbox, the session cookie's attributes, the security headers, that the
// inline stylesheet is allowed by the CSP, that framing is refused, and that the consent
// form's 303 to the client passes Chromium's form-action check (enforced on redirects).
// Screenshots of every page at phone (390×844) and desktop (1280×800) sizes go to
// <var>/screenshots.
//
// Each flow starts at the real /oauth/authorize of the test stack (PKCE, a DCR client whose
// redirect URI is a loopback server of the test) and ends with the code redeemed at
// /oauth/token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { varDir, sleep, baseUrl, http as api, managementToken } from './harness.mjs';
import { parseForms } from './browser.mjs';

const CHROMIUM = process.env.PORTCULLIS_CHROMIUM ?? '/usr/bin/chromium';
const shotsDir = path.join(varDir, 'screenshots');
const outbox = path.join(varDir, 'mail', 'outbox.jsonl');
const SCOPES = [
  { name: 'demo:read', description: 'Read your notes' },
  { name: 'demo:write', description: 'Create and change your notes' },
];

const pages = { baseUrl };
let context;
let resource;
const clients = {};
let userDataDir;
let callback;
const cspViolations = [];

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// A stand-in for the client's loopback redirect URI: records what arrives.
async function startCallback() {
  const port = await freePort();
  const hits = [];
  const server = http.createServer((req, res) => {
    // Only the redirect target: Chromium also asks this origin for /favicon.ico.
    const url = new URL(req.url, `http://127.0.0.1:${port}`);
    if (url.pathname === '/callback') hits.push(url);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('callback received');
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return { uri: `http://127.0.0.1:${port}/callback`, hits, close: () => new Promise((r) => server.close(r)) };
}

// A DCR client of the test resource, registered once per kind.
async function client(kind) {
  if (!clients[kind]) {
    const body = kind === 'named'
      ? { client_name: 'Notes Assistant', client_uri: 'https://notes.example', redirect_uris: [callback.uri], token_endpoint_auth_method: 'none' }
      : { client_name: 'Hostless Notes', redirect_uris: [callback.uri], token_endpoint_auth_method: 'none' };
    const r = await api(`/resources/${resource.id}/client_register`, { method: 'POST', json: body });
    assert.equal(r.status, 201, r.text);
    clients[kind] = r.json;
  }
  return clients[kind];
}

// Starts an authorization at the real /oauth/authorize (as a client would send the browser)
// and returns the login request it created: {id, csrf, state, verifier, clientId}.
async function newLoginRequest({ loginHint, kind = 'named' } = {}) {
  const c = await client(kind);
  const state = `st-${randomBytes(6).toString('hex')}`;
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: c.client_id, redirect_uri: callback.uri, state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    scope: SCOPES.map((x) => x.name).join(' '), resource: resource.server_url, login_hint: loginHint ?? '' })) {
    if (v) url.searchParams.set(k, v);
  }
  const r = await fetch(url, { redirect: 'manual' });
  assert.equal(r.status, 303, await r.text());
  const login = new URL(r.headers.get('location'));
  assert.equal(login.pathname, '/oauth/login');
  const id = login.searchParams.get('login_request_id');
  const page = await fetch(login);
  const form = parseForms(await page.text()).find((f) => 'email' in f.fields);
  return { id, csrf: form.fields.csrf, state, verifier, clientId: c.client_id };
}

async function redeem(lr, code) {
  const t = await api('/oauth/token', { method: 'POST', form: { grant_type: 'authorization_code', code, code_verifier: lr.verifier,
    redirect_uri: callback.uri, client_id: lr.clientId } });
  assert.equal(t.status, 200, t.text);
  return t.json;
}

const uniqueEmail = (tag) => `${tag}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;

// The newest outbox message for an address (local mode writes one JSON object per line).
async function mailFor(to) {
  for (let i = 0; i < 50; i++) {
    if (existsSync(outbox)) {
      const mails = readFileSync(outbox, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      const mine = mails.filter((m) => m.to === to);
      if (mine.length) return mine.at(-1);
    }
    await sleep(50);
  }
  throw new Error(`no mail for ${to} in ${outbox}`);
}

async function shoot(page, name, { dark = false } = {}) {
  for (const [size, viewport] of [['phone', { width: 390, height: 844 }], ['desktop', { width: 1280, height: 800 }]]) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: path.join(shotsDir, `${name}-${size}.png`), fullPage: true });
  }
  if (dark) { // the same page in the dark colour scheme, at phone size
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(shotsDir, `${name}-phone-dark.png`), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
  }
}

function assertPageHeaders(response) {
  const h = response.headers();
  assert.match(h['content-type'], /^text\/html; charset=utf-8/);
  assert.match(h['content-security-policy'], /default-src 'none'/);
  assert.match(h['content-security-policy'], /frame-ancestors 'none'/);
  assert.match(h['content-security-policy'], /style-src 'sha256-/);
  assert.equal(h['x-frame-options'], 'DENY');
  assert.equal(h['referrer-policy'], 'no-referrer');
  assert.equal(h['cache-control'], 'no-store');
}

async function newPage() {
  const page = await context.newPage();
  page.on('console', (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) cspViolations.push(msg.text());
  });
  return page;
}

before(async () => {
  mkdirSync(shotsDir, { recursive: true });
  callback = await startCallback();
  const admin = { authorization: `Bearer ${await managementToken()}` };
  const r = await api('/api/v1/resources', { method: 'POST', headers: admin, json: {
    name: 'Demo MCP Server', server_url: `https://pages-${randomBytes(3).toString('hex')}.test/mcp`, scopes: SCOPES } });
  assert.equal(r.status, 201, r.text);
  resource = r.json;
  userDataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
  });
});

after(async () => {
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  await callback?.close();
});

test('sign in with the e-mailed code, then allow: the 303 reaches the loopback client', async () => {
  const email = uniqueEmail('code');
  const lr = await newLoginRequest({ loginHint: email });
  const page = await newPage();

  const first = await page.goto(`${pages.baseUrl}/oauth/login?login_request_id=${lr.id}`);
  assert.equal(first.status(), 200);
  assertPageHeaders(first);
  // The hook of contract §12, prefilled from login_hint.
  assert.equal(await page.inputValue('form input[name=email]'), email);
  assert.equal(await page.getAttribute('input[name=email]', 'autocomplete'), 'email');
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  // The inline stylesheet ran (its CSP hash matched): the primary button is styled.
  const background = await page.$eval('button[type=submit]', (b) => getComputedStyle(b).backgroundColor);
  assert.equal(background, 'rgb(29, 78, 216)');
  await shoot(page, '1-login');

  await Promise.all([page.waitForURL(/\/oauth\/login\/code\?/), page.click('button[type=submit]')]);
  assert.equal(await page.getAttribute('input[name=code]', 'autocomplete'), 'one-time-code');
  assert.equal(await page.getAttribute('input[name=code]', 'inputmode'), 'numeric');
  await shoot(page, '2-code');

  const mail = await mailFor(email);
  assert.match(mail.code, /^\d{6}$/);
  assert.equal(typeof mail.sent_at, 'string');
  const wrong = mail.code === '000000' ? '111111' : '000000';
  await page.fill('input[name=code]', wrong);
  const rejected = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'),
    page.click('form[action="/oauth/login/code"] button[type=submit]')]);
  assert.equal(rejected[0].status(), 400);
  assert.match(await page.textContent('[role=alert]'), /4 attempts left/);
  await shoot(page, '3-code-wrong', { dark: true });

  await page.fill('input[name=code]', mail.code);
  await Promise.all([page.waitForURL(/\/oauth\/consent\?/), page.click('form[action="/oauth/login/code"] button[type=submit]')]);
  const [session] = (await context.cookies(pages.baseUrl)).filter((c) => c.name === 'portcullis_session');
  assert.ok(session, 'session cookie set');
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Lax');
  assert.equal(session.secure, false); // local http stack: no __Host- prefix, no Secure
  assert.equal(session.path, '/');
  assert.match(await page.textContent('h1'), /Notes Assistant wants to access Demo MCP Server/);
  assert.match(await page.textContent('main'), /Read your notes/);
  assert.match(await page.textContent('main'), /127\.0\.0\.1/);
  assert.ok(await page.$('.warning'), 'loopback redirect warning');
  await shoot(page, '4-consent', { dark: true });

  await Promise.all([page.waitForURL((u) => u.href.startsWith(callback.uri)),
    page.click('button[name=decision][value=allow]')]);
  const hit = callback.hits.at(-1);
  assert.equal(hit.searchParams.get('state'), lr.state);
  assert.equal(hit.searchParams.get('iss'), `${baseUrl}/resources/${resource.id}`);
  const tokens = await redeem(lr, hit.searchParams.get('code'));
  assert.equal(tokens.scope, 'demo:read demo:write');
  assert.equal(cspViolations.length, 0, cspViolations.join('\n'));
  await page.close();
});

test('sign in with the e-mailed link (one click on our page), then deny', async () => {
  const email = uniqueEmail('link');
  const lr = await newLoginRequest({ kind: 'hostless' });
  const page = await newPage();
  await page.goto(`${pages.baseUrl}/oauth/login?login_request_id=${lr.id}`);
  await page.fill('input[name=email]', email);
  await Promise.all([page.waitForURL(/\/oauth\/login\/code\?/), page.click('button[type=submit]')]);
  const mail = await mailFor(email);
  assert.ok(mail.link.startsWith(`${pages.baseUrl}/oauth/login/link?token=`), mail.link);

  const landing = await page.goto(mail.link);
  assert.equal(landing.status(), 200);
  assertPageHeaders(landing);
  assert.match(await page.textContent('main'), new RegExp(email.replace(/[.+]/g, '\\$&')));
  await shoot(page, '5-link');
  await Promise.all([page.waitForURL(/\/oauth\/consent\?/), page.click('button[type=submit]')]);
  await Promise.all([page.waitForURL((u) => u.href.startsWith(callback.uri)),
    page.click('button[name=decision][value=deny]')]);
  assert.equal(callback.hits.at(-1).searchParams.get('error'), 'access_denied');
  // The link worked once.
  const again = await page.goto(mail.link);
  assert.equal(again.status(), 400);
  assert.equal(cspViolations.length, 0, cspViolations.join('\n'));
  await page.close();
});

test('error pages: expired login request, too many codes, framing refused', async () => {
  const page = await newPage();
  const expired = await page.goto(`${pages.baseUrl}/oauth/login?login_request_id=no-such-request`);
  assert.equal(expired.status(), 400);
  assertPageHeaders(expired);
  assert.match(await page.textContent('main'), /This sign-in link has expired; return to the application and try again/);
  await shoot(page, '6-expired');

  const email = uniqueEmail('limit');
  const lr = await newLoginRequest();
  for (let i = 0; i < 5; i++) {
    const r = await fetch(`${pages.baseUrl}/oauth/login/email`, {
      method: 'POST', redirect: 'manual',
      body: new URLSearchParams({ login_request_id: lr.id, csrf: lr.csrf, email }),
    });
    assert.equal(r.status, 303);
  }
  await page.goto(`${pages.baseUrl}/oauth/login?login_request_id=${lr.id}`);
  await page.fill('input[name=email]', email);
  const [limited] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'),
    page.click('button[type=submit]')]);
  assert.equal(limited.status(), 429);
  assert.ok(Number(limited.headers()['retry-after']) > 0);
  assert.match(await page.textContent('h1'), /Too many codes requested/);
  await shoot(page, '7-too-many');

  // A page that frames the login page gets nothing: X-Frame-Options DENY / frame-ancestors.
  // Beside it, a control frame without those headers must render, so an iframe that never
  // loaded at all cannot pass for a refused one.
  const framer = await newLoginRequest();
  const loginUrl = `${pages.baseUrl}/oauth/login?login_request_id=${framer.id}`;
  await page.goto(`${callback.uri}?framer=1`);
  const [framedResponse] = await Promise.all([
    page.waitForResponse((r) => r.url() === loginUrl),
    // setContent resolves on the load event, which waits for both frames.
    page.setContent(`<iframe id="control" src="${callback.uri}?framed=1"></iframe><iframe id="login" src="${loginUrl}"></iframe>`),
  ]);
  assert.equal(framedResponse.status(), 200, 'the browser did fetch the framed login page');
  assert.equal(framedResponse.headers()['x-frame-options'], 'DENY');
  const control = await (await page.$('#control')).contentFrame();
  assert.match(await control.textContent('body'), /callback received/, 'the control frame rendered');
  const login = await (await page.$('#login')).contentFrame();
  assert.equal(await login?.$('input[name=email]').catch(() => null) ?? null, null, 'the framed login page did not render');
  await page.close();
});
