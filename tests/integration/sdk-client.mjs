// The official MCP TypeScript SDK client driven through Portcullis' sign-in and consent pages by
// a scripted browser: what mcp-sdk.test.mjs and validator-e2e.test.mjs connect with.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Browser, completeAuthorization } from './browser.mjs';

// An OAuthClientProvider whose "browser" is our scripted one: it signs the user in with the
// e-mailed code and clicks Allow. `issuer()` names the issuer the redirect's iss must carry.
export class ScriptedProvider {
  // grantTypes: the SDK 1.x refreshes instead of re-authorizing on a 403 when it holds a
  // refresh token, so a refresh can never widen the scope; step-up needs a client without one.
  constructor(email, { issuer, grantTypes = ['authorization_code', 'refresh_token'], clientMetadataUrl } = {}) {
    this.email = email;
    this.issuer = issuer;
    this.grantTypes = grantTypes;
    this.browser = new Browser();
    this.clientMetadataUrl = clientMetadataUrl;
    this.redirects = [];
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this._state = randomBytes(8).toString('hex');
  }
  get redirectUrl() { return 'http://127.0.0.1:3000/callback'; }
  get clientMetadata() {
    return { client_name: 'MCP SDK e2e', redirect_uris: [this.redirectUrl], grant_types: this.grantTypes, response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() { return this._state; }
  clientInformation() { return this._client; }
  saveClientInformation(info) { this._client = info; }
  tokens() { return this._tokens; }
  saveTokens(t) { this._tokens = t; }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() { return this._verifier; }
  async redirectToAuthorization(url) {
    this.redirects.push(url);
    const page = await completeAuthorization(this.browser, url.href, this.email);
    const back = new URL(page.location);
    assert.equal(back.searchParams.get('state'), this._state);
    assert.equal(back.searchParams.get('iss'), this.issuer());
    this.code = back.searchParams.get('code');
    assert.ok(this.code, `authorization failed: ${page.location}`);
  }
}

// Connects to the MCP server at `url`, going through authorization as often as it asks.
export async function connect(url, provider) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    const client = new Client({ name: 'portcullis-e2e', version: '1.0.0' });
    try {
      await client.connect(transport);
      return { client, transport };
    } catch (e) {
      if (!(e instanceof UnauthorizedError)) throw e;
      await transport.finishAuth(provider.code);
    }
  }
  throw new Error('could not connect');
}

// Runs `op`, finishing an authorization (step-up, refresh) whenever the SDK asks for one.
export async function withAuth(provider, session, op) {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await op();
    } catch (e) {
      if (!(e instanceof UnauthorizedError)) throw e;
      await session.transport.finishAuth(provider.code);
    }
  }
  throw new Error('operation kept failing authorization');
}
