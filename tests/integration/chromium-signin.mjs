// The MCP SDK's OAuth provider (sdk-client.mjs) whose browser is headless Chromium, for the
// sign-in methods that leave Portcullis' pages (social login, custom authentication): `act`
// looks at the page and does the one thing a person would do there (returns false when there
// is nothing to do yet); the consent page's Allow is clicked here. The redirect to the client
// (http://127.0.0.1:3000/callback) is caught and its code kept.
import assert from 'node:assert/strict';
import { sleep } from './harness.mjs';
import { ScriptedProvider } from './sdk-client.mjs';

export class ChromiumProvider extends ScriptedProvider {
  constructor(context, email, act, opts) {
    super(email, opts);
    this.context = context;
    this.act = act;
    this.visited = [];
    this.pages = new Map();  // path → the HTML seen there last
  }

  async redirectToAuthorization(url) {
    this.redirects.push(url);
    const page = await this.context.newPage();
    page.on('framenavigated', (f) => { if (f === page.mainFrame()) this.visited.push(f.url()); });
    let back;
    await page.route('http://127.0.0.1:3000/**', (route) => {
      back = new URL(route.request().url());
      return route.fulfill({ status: 200, contentType: 'text/plain', body: 'client received the code' });
    });
    await page.goto(url.href);
    const deadline = Date.now() + 30000;
    while (!back && Date.now() < deadline) {
      const here = page.url();
      const html = await page.content().catch(() => '');
      if (/Sign-in failed|Single sign-on failed/.test(html)) throw new Error(`sign-in failed at ${here}: ${html.slice(0, 2000)}`);
      this.pages.set(new URL(here).pathname, html);
      let acted = true;
      try {
        if (await page.$('button[name=decision][value=allow]')) await page.click('button[name=decision][value=allow]');
        else acted = await this.act(page, here, html);
      } catch {
        // the page navigated under us: look again
      }
      if (acted) await page.waitForURL((u) => u.href !== here, { timeout: 10000 }).catch(() => {});
      else await sleep(100);
    }
    await page.close();
    assert.ok(back, `no redirect to the client; visited ${this.visited.join(' → ')}`);
    assert.equal(back.searchParams.get('state'), this._state);
    assert.equal(back.searchParams.get('iss'), this.issuer());
    this.code = back.searchParams.get('code');
    assert.ok(this.code, back.href);
  }

  // The visited URLs as paths on `baseUrl`, origins elsewhere.
  route(baseUrl) {
    return this.visited.map((u) => { const x = new URL(u); return x.origin === baseUrl ? x.pathname : x.origin; });
  }
}
