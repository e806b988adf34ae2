// A small scripted browser for the sign-in and consent pages: a cookie jar, manual redirects,
// and form submission that carries every hidden field (CSRF tokens included) the page put in
// the form. Stops when a redirect leaves for the client's redirect URI.
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { baseUrl, varDir, sleep } from './harness.mjs';

const decode = (s) =>
  s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#x27;/g, "'").replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>').replace(/&amp;/g, '&');

function attr(tag, name) {
  const m = tag.match(new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)')`, 'i'));
  return m ? decode(m[2] ?? m[3] ?? '') : undefined;
}

// Every <form> of a page: its action, method and hidden/pre-filled inputs and buttons.
export function parseForms(html) {
  const forms = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const fields = {};
    for (const input of m[2].matchAll(/<input\b[^>]*>/gi)) {
      const name = attr(input[0], 'name');
      if (name !== undefined) fields[name] = attr(input[0], 'value') ?? '';
    }
    const buttons = [...m[2].matchAll(/<button\b[^>]*>/gi)].map((b) => ({ name: attr(b[0], 'name'), value: attr(b[0], 'value') }));
    forms.push({ action: attr(m[1], 'action') ?? '', method: (attr(m[1], 'method') ?? 'get').toLowerCase(), fields, buttons, html: m[0] });
  }
  return forms;
}

export class Browser {
  constructor() {
    this.cookies = new Map();
  }

  cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  remember(res) {
    for (const c of res.headers.getSetCookie?.() ?? []) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/max-age=0|expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  // One request; returns {status, url, location, headers, html}.
  async request(url, { method = 'GET', form } = {}) {
    const headers = { cookie: this.cookieHeader() };
    let body;
    if (form) {
      body = new URLSearchParams(form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await fetch(url, { method, headers, body, redirect: 'manual' });
    this.remember(res);
    const html = await res.text();
    const location = res.headers.get('location');
    return { status: res.status, url, headers: res.headers, html, location: location ? new URL(location, url).href : undefined };
  }

  // Follows redirects within Portcullis; stops at a page or at a redirect elsewhere.
  async follow(start, options) {
    let r = await this.request(start, options);
    for (let i = 0; i < 10 && r.location && r.location.startsWith(baseUrl); i++) {
      r = await this.request(r.location);
    }
    return r;
  }

  // Submits the page's form that contains `marker` (an input or button name), with `values`.
  async submit(page, marker, values = {}) {
    const form = parseForms(page.html).find((f) => marker in f.fields || f.buttons.some((b) => b.name === marker));
    if (!form) throw new Error(`no form with ${marker} on ${page.url}:\n${page.html.slice(0, 2000)}`);
    const action = new URL(form.action || page.url, page.url).href;
    return this.follow(action, { method: 'POST', form: { ...form.fields, ...values } });
  }
}

// The newest message the local outbox holds for `to`, waiting briefly for it.
export async function lastMail(to) {
  const file = path.join(varDir, 'mail', 'outbox.jsonl');
  for (let i = 0; i < 50; i++) {
    if (existsSync(file)) {
      const mails = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((m) => m.to === to);
      if (mails.length) return mails[mails.length - 1];
    }
    await sleep(100);
  }
  throw new Error(`no mail for ${to}`);
}

// Signs `email` in on the page the browser reached, through the e-mailed code, and returns
// the page after it (consent) or the redirect to the client.
export async function signInWithCode(browser, page, email) {
  const sent = await browser.submit(page, 'email', { email });
  const mail = await lastMail(email);
  return browser.submit(sent, 'code', { code: mail.code });
}

// Drives whatever pages the flow shows — sign-in when not signed in, consent when asked — and
// returns the redirect that leaves Portcullis (to the client, with a code or an error).
export async function completeAuthorization(browser, url, email, decision = 'allow') {
  let page = await browser.follow(url);
  if (!page.location && /name="email"/.test(page.html)) page = await signInWithCode(browser, page, email);
  if (!page.location && /name="decision"/.test(page.html)) page = await browser.submit(page, 'decision', { decision });
  if (!page.location) throw new Error(`the flow stopped at ${page.url} (${page.status}):\n${page.html.slice(0, 1500)}`);
  return page;
}
