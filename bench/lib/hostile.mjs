// bench/hostile: the worst-case request under the size limits for each endpoint family, sent to
// the running stack before any authentication, with the server's time for it. Every parser of
// unauthenticated input is covered: form bodies, query strings, headers and cookies, JSON
// bodies, JWTs (bearer tokens, client assertions) and DPoP proofs. Server time is the worker's
// own `duration_us` from its access log (matched by X-Request-Id) where the route logs requests,
// else the client's time over loopback (marked "client"). Prints a markdown table.
// Environment: PORTCULLIS_VAR_DIR, PORTCULLIS_TEST_ENV (the stack's local.env), BENCH_RUNS (5).
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { http, env, baseUrl, varDir } from '../../tests/integration/harness.mjs';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const MiB = 1024 * 1024;
const b64 = (s) => Buffer.from(s).toString('base64url');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

// n distinct short parameter names (base 36), as the issue's reproduction (n = 120,000: 840 kB).
const manyParams = (n) => Array.from({ length: n }, (_, i) => `${i.toString(36)}=${i % 5 < 2 ? '12' : '1'}`).join('&');
// `n` parameters whose values fill `bytes` with percent-escapes (the most decoding work a byte
// can ask for), the last name repeating the first so the whole form is read.
function fatForm(n, bytes) {
  const value = '%41'.repeat(Math.floor(bytes / n / 3) - 4);
  const out = Array.from({ length: n - 1 }, (_, i) => `p${i}=${value}`);
  out.push(`p0=${value}`);
  return out.join('&');
}
// A JWT-shaped token of about `bytes` whose header is one JSON object with many members.
function fatJwt(bytes) {
  const members = [];
  let size = 0;
  for (let i = 0; size < (bytes * 3) / 4 - 64; i++) {
    const m = `"k${i}":${i}`;
    members.push(m);
    size += m.length + 1;
  }
  return `${b64(`{"alg":"RS256","typ":"at+jwt",${members.join(',')}}`)}.${b64('{}')}.${b64('x'.repeat(256))}`;
}
// A DPoP proof signed (badly) by an RSA "key" of the largest accepted size (16,384 bits) with a
// full-size signature: the verifier must do the whole modular exponentiation before refusing.
function bigRsaProof(htu, htm = 'POST') {
  const n = randomBytes(2048);
  n[0] |= 0x80;
  n[2047] |= 1;
  const sig = randomBytes(2048);
  sig[0] &= 0x7f;
  const header = { typ: 'dpop+jwt', alg: 'RS256', jwk: { kty: 'RSA', n: n.toString('base64url'), e: 'AQAB' } };
  const claims = { htm, htu, iat: Math.floor(Date.now() / 1000), jti: randomBytes(16).toString('hex') };
  return `${b64(JSON.stringify(header))}.${b64(JSON.stringify(claims))}.${sig.toString('base64url')}`;
}

function logDurationUs(family, requestId) {
  const file = path.join(varDir, 'log', `${family}.log`);
  if (!requestId || !existsSync(file)) return undefined;
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = lines.length - 1; i >= 0 && i >= lines.length - 5000; i--) {
    if (!lines[i].includes(requestId)) continue;
    try {
      const l = JSON.parse(lines[i]);
      if (l.msg === 'request' && l.request_id === requestId) return l.duration_us;
    } catch { /* not a JSON line */ }
  }
  return undefined;
}

async function measure({ name, family, url, method = 'POST', headers = {}, body }) {
  const server = [];
  const client = [];
  let status;
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const res = await fetch(url, { method, headers, body, redirect: 'manual' });
    await res.arrayBuffer();
    client.push(Number(process.hrtime.bigint() - t0) / 1e6);
    status = res.status;
    await new Promise((r) => setTimeout(r, 50));  // the log line is written after the response
    const us = logDurationUs(family, res.headers.get('x-request-id'));
    if (us !== undefined) server.push(us / 1000);
  }
  const size = (body?.length ?? 0) + Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0) + url.length;
  return { name, status, size, server: server.length === runs ? median(server) : undefined, client: median(client) };
}

const resourceId = env.PORTCULLIS_DEMO_RESOURCE_ID;
const mcpUrl = env.PORTCULLIS_DEMO_MCP_URL;
const client = await http(`/resources/${resourceId}/client_register`, { method: 'POST', json: { client_name: 'bench hostile', redirect_uris: ['http://127.0.0.1:3000/cb'], token_endpoint_auth_method: 'none' } });
if (client.status !== 201) throw new Error(`DCR: ${client.status} ${client.text}`);
const clientId = client.json.client_id;

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const json = { 'content-type': 'application/json' };
const scopeFlood = Array.from({ length: 120000 }, (_, i) => `s${i.toString(36)}`).join(' ');
const manyHeaders = Object.fromEntries(Array.from({ length: 700 }, (_, i) => [`x-h${i}`, 'v'.repeat(60)]));
const cookies = Array.from({ length: 256 }, (_, i) => `c${i}=${'v'.repeat(48)}`).join('; ');
const query256 = manyParams(256);
const wideJson = `{${Array.from({ length: 80000 }, (_, i) => `"k${i.toString(36)}":0`).join(',')}}`;
const longArray = `{"redirect_uris":[${'0,'.repeat(480000)}0]}`;
const deepJson = `${'['.repeat(64)}${']'.repeat(64)}`;
const capJson = `{"redirect_uris":[${'0,'.repeat(19990)}0]}`;  // just under the 20,000-value cap
const cases = [
  { name: 'form: 120,000 parameters, 840 kB (the report)', family: 'oauth', url: `${baseUrl}/oauth/token`, headers: form, body: manyParams(120000) },
  { name: 'form: 256 parameters of %-escapes, 1 MiB, one repeat', family: 'oauth', url: `${baseUrl}/oauth/token`, headers: form, body: fatForm(256, MiB - 4096) },
  { name: 'form: authorize, 120,000 distinct scopes', family: 'oauth', url: `${baseUrl}/oauth/authorize`, headers: form, body: `response_type=code&client_id=${encodeURIComponent(clientId)}&code_challenge=${'A'.repeat(43)}&code_challenge_method=S256&scope=${encodeURIComponent(scopeFlood)}` },
  { name: 'form: revoke, 120,000 parameters', family: 'oauth', url: `${baseUrl}/oauth/revoke`, headers: form, body: manyParams(120000) },
  { name: 'form: introspect, 120,000 parameters', family: 'oauth', url: `${baseUrl}/oauth/introspect`, headers: form, body: manyParams(120000) },
  { name: 'query: authorize, 256 parameters', family: 'oauth', method: 'GET', url: `${baseUrl}/oauth/authorize?${query256}&client_id=${encodeURIComponent(clientId)}` },
  { name: 'query: API listing, 2,000 parameters', family: 'api', method: 'GET', url: `${baseUrl}/api/v1/users?${manyParams(2000)}` },
  { name: 'headers: 700 headers, 46 kB', family: 'wellknown', method: 'GET', url: `${baseUrl}/keys`, headers: manyHeaders },
  { name: 'cookies: 256 cookies, 14 kB', family: 'oauth', method: 'GET', url: `${baseUrl}/oauth/login?login_request_id=x`, headers: { cookie: cookies } },
  { name: 'JSON: DCR, 80,000 members, 1 MiB', family: 'oauth', url: `${baseUrl}/resources/${resourceId}/client_register`, headers: json, body: wideJson },
  { name: 'JSON: DCR, 480,000-element array, 1 MiB', family: 'oauth', url: `${baseUrl}/resources/${resourceId}/client_register`, headers: json, body: longArray },
  { name: 'JSON: DCR, 19,991-element array (under the value cap)', family: 'oauth', url: `${baseUrl}/resources/${resourceId}/client_register`, headers: json, body: capJson },
  { name: 'JSON: DCR, nested 64 deep', family: 'oauth', url: `${baseUrl}/resources/${resourceId}/client_register`, headers: json, body: deepJson },
  { name: 'JWT: API bearer, 15 KiB header of members', family: 'api', method: 'GET', url: `${baseUrl}/api/v1/users`, headers: { authorization: `Bearer ${fatJwt(15 * 1024)}` } },
  { name: 'JWT: client assertion, 15 KiB', family: 'oauth', url: `${baseUrl}/oauth/token`, headers: form, body: `grant_type=client_credentials&client_assertion_type=${encodeURIComponent('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')}&client_assertion=${fatJwt(15 * 1024)}` },
  { name: 'JWT: demo MCP server bearer, 15 KiB', family: 'demo-mcp', url: mcpUrl, headers: { ...json, authorization: `Bearer ${fatJwt(15 * 1024)}` }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' },
  { name: 'DPoP: token endpoint, RSA-16384 proof', family: 'oauth', url: `${baseUrl}/oauth/token`, headers: { ...form, dpop: bigRsaProof(`${baseUrl}/oauth/token`) }, body: `grant_type=refresh_token&refresh_token=x&client_id=${encodeURIComponent(clientId)}` },
];
// DCR is rate-limited per address: leave the JSON cases room (BENCH_RUNS each).
const results = [];
for (const c of cases) {
  results.push(await measure(c));
  process.stderr.write(`${c.name}: ${results.at(-1).status}\n`);
}

const fmt = (ms) => (ms === undefined ? '' : ms.toFixed(2));
console.log(`| request (before authentication) | bytes | status | server ms (median of ${runs}) | client ms |`);
console.log('|---|---:|---:|---:|---:|');
for (const r of results) {
  console.log(`| ${r.name} | ${r.size.toLocaleString('en-US')} | ${r.status} | ${fmt(r.server)} | ${fmt(r.client)} |`);
}
