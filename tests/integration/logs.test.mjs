// Logs never contain a token or a secret (security rules): run a full flow, then search every
// log file of the stack (workers, CLI, nginx access and error logs) for each secret value the
// flow handled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { http, env, basic, managementToken, varDir, sleep } from './harness.mjs';
import { Browser, completeAuthorization, lastMail } from './browser.mjs';

test('no token, code, secret or sign-in code reaches any log file', async () => {
  const admin = { authorization: `Bearer ${await managementToken()}` };
  const secrets = [env.PORTCULLIS_CLIENT_SECRET, admin.authorization.slice(7)];
  const resource = (await http('/api/v1/resources', { method: 'POST', headers: admin, json: {
    name: 'Logs', server_url: `https://logs-${randomBytes(3).toString('hex')}.test/mcp`, scopes: [{ name: 'a:b', description: 'x' }] } })).json;
  const redirect = 'http://127.0.0.1:3000/callback';
  const client = (await http(`/resources/${resource.id}/client_register`, { method: 'POST', json: {
    client_name: 'Logs', redirect_uris: [redirect], token_endpoint_auth_method: 'client_secret_post' } })).json;
  secrets.push(client.client_secret);
  const verifier = randomBytes(32).toString('base64url');
  const email = `logs-${randomBytes(3).toString('hex')}@example.com`;
  const u = new URL(`${env.PORTCULLIS_BASE_URL}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: redirect, state: 'st',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' })) u.searchParams.set(k, v);
  const page = await completeAuthorization(new Browser(), u.href, email);
  const mail = await lastMail(email);
  const signinCode = mail.code; // six digits: searched with digit boundaries below
  secrets.push(new URL(mail.link).searchParams.get('token'));
  const code = new URL(page.location).searchParams.get('code');
  secrets.push(code, verifier);
  const t = (await http('/oauth/token', { method: 'POST', form: { grant_type: 'authorization_code', code, code_verifier: verifier,
    redirect_uri: redirect, client_id: client.client_id, client_secret: client.client_secret } })).json;
  secrets.push(t.access_token, t.refresh_token);
  const r = (await http('/oauth/token', { method: 'POST', form: { grant_type: 'refresh_token', refresh_token: t.refresh_token,
    client_id: client.client_id, client_secret: client.client_secret } })).json;
  secrets.push(r.access_token, r.refresh_token);
  await http('/oauth/revoke', { method: 'POST', form: { token: r.refresh_token }, headers: { authorization: basic(client.client_id, client.client_secret) } });
  await sleep(1500); // nginx flushes its buffered access log every second

  const logDir = path.join(varDir, 'log');
  const files = readdirSync(logDir).filter((f) => f.endsWith('.log'));
  assert.ok(files.length >= 5, `log files: ${files}`);
  for (const f of files) {
    const text = readFileSync(path.join(logDir, f), 'utf8');
    for (const s of secrets) {
      assert.ok(s && s.length >= 16, 'a secret to look for');
      assert.ok(!text.includes(s), `${f} contains a secret (${s.slice(0, 4)}…)`);
    }
    assert.doesNotMatch(text, new RegExp(`(?<![0-9])${signinCode}(?![0-9])`), `${f} contains the sign-in code`);
  }
});
