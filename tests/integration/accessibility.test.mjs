// Accessibility of the pages a user signs in through (issue 14 item 3: labels, keyboard,
// contrast): npm `axe-core` audits each page as Chromium renders it — the login page with every
// kind of method on it, the code page, the consent page, an error page, and the login page with
// an error shown — against WCAG 2.1 A and AA. Any violation fails with axe's own description
// of the element and the rule.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { baseUrl, http } from './harness.mjs';
import { api, unique } from './management.mjs';
import { mcpUrl, resourceId, CHROMIUM_ARGS } from './sso-fixtures.mjs';
import { lastMail } from './browser.mjs';

const CHROMIUM = process.env.PORTCULLIS_CHROMIUM ?? '/usr/bin/chromium';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ALL_METHODS = ['email', 'social', 'sso', 'custom'];

let browser;
let context;
let userDataDir;
let social;

before(async () => {
  // Every kind of method on the login page: custom authentication and a social button.
  const env = await api('PATCH', '/api/v1/environment', { json: { custom_login_url: 'https://login.example.com/start', login_methods: ALL_METHODS } });
  assert.equal(env.status, 200, env.text);
  social = await api('POST', '/api/v1/social_connections', { json: { provider: 'github', client_id: `a11y-${unique()}`, client_secret: 's' } });
  assert.equal(social.status, 201, social.text);
  userDataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-a11y-'));
  // The audit script is injected by the test; the pages' own CSP stays strict for users.
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  context = await browser.newContext({ bypassCSP: true, viewport: { width: 390, height: 844 } });
});

after(async () => {
  await api('PATCH', '/api/v1/environment', { json: { custom_login_url: '', login_methods: ALL_METHODS } });
  if (social?.json?.id) await api('DELETE', `/api/v1/social_connections/${social.json.id}`);
  await context?.close();
  await browser?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

// The WCAG 2.1 A/AA violations axe finds on the page, as readable lines.
async function audit(page, what) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => globalThis.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
  }));
  const lines = result.violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${v.help} — ${n.target.join(' ')}: ${n.failureSummary}`));
  assert.deepEqual(lines, [], `${what}: ${page.url()}`);
  assert.ok(result.passes.length > 10, `${what}: axe ran (${result.passes.length} rules passed)`);
}

async function authorizeUrl() {
  const reg = await http(`/resources/${resourceId}/client_register`, { method: 'POST',
    json: { client_name: 'Accessibility test', redirect_uris: ['http://127.0.0.1:3000/callback'], token_endpoint_auth_method: 'none' } });
  assert.equal(reg.status, 201, reg.text);
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: reg.json.client_id, redirect_uri: 'http://127.0.0.1:3000/callback',
    state: 's', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    scope: 'demo:read', resource: mcpUrl })) url.searchParams.set(k, v);
  return url.href;
}

test('login, code and consent pages pass WCAG 2.1 AA (axe-core in Chromium)', async () => {
  const page = await context.newPage();
  await page.goto(await authorizeUrl());
  assert.match(page.url(), /\/oauth\/login\?/);
  assert.ok(await page.$('a:has-text("Continue with your account at login.example.com")'), 'custom button');
  assert.ok(await page.$('a:has-text("Continue with GitHub")'), 'social button');
  await audit(page, 'login page');

  // A refused address: the page again, with its error shown (the browser's own check is
  // switched off, as an old browser would not make it).
  await page.evaluate(() => document.querySelectorAll('form').forEach((f) => { f.noValidate = true; }));
  await page.fill('input[name=email]', 'not an address');
  await Promise.all([page.waitForNavigation(), page.press('input[name=email]', 'Enter')]);
  assert.equal(await page.inputValue('input[name=email]'), 'not an address');
  await audit(page, 'login page with an error');

  const email = `axe.${unique()}@example.com`;
  await page.fill('input[name=email]', email);
  await Promise.all([page.waitForNavigation(), page.press('input[name=email]', 'Enter')]);
  assert.ok(await page.$('input[name=code]'), 'the code page');
  await audit(page, 'code page');

  const mail = await lastMail(email);
  await page.fill('input[name=code]', mail.code);
  await Promise.all([page.waitForNavigation(), page.press('input[name=code]', 'Enter')]);
  assert.ok(await page.$('button[name=decision]'), `the consent page: ${page.url()}`);
  await audit(page, 'consent page');
  await page.close();
});

test('error pages pass WCAG 2.1 AA', async () => {
  const page = await context.newPage();
  const r = await page.goto(`${baseUrl}/oauth/login?login_request_id=${unique()}`);
  assert.ok(r.status() >= 400, `an error page (${r.status()})`);
  await audit(page, 'expired login request page');
  // The control: the same audit on the page with an image lacking a text alternative fails.
  await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<img src="/nothing.png">'));
  await assert.rejects(audit(page, 'control'), /image-alt/);
  await page.close();
});
