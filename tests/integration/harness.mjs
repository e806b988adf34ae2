// Shared helpers for the integration tests. They drive the real stack that scripts/test
// started (nginx, the worker binaries, MariaDB) over real sockets on 127.0.0.1.
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function parseEnvFile(file) {
  const out = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = line.match(/^\s*([A-Z0-9_]+)=(.*)$/);
    if (m) out[m[1]] = m[2].replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}

const envFile = process.env.PORTCULLIS_TEST_ENV ?? path.join(repoDir, 'var', 'test', 'local.env');
if (!existsSync(envFile)) {
  throw new Error(`no ${envFile}: run the integration tests through scripts/test`);
}
export const env = parseEnvFile(envFile);
export const baseUrl = env.PORTCULLIS_BASE_URL;
export const varDir = process.env.PORTCULLIS_VAR_DIR ?? path.dirname(envFile);
export const configFile = path.join(varDir, 'portcullis.conf');
export const buildDir = process.env.PORTCULLIS_BUILD_DIR ?? path.join(repoDir, 'build', 'test');
// The binaries the stack runs (scripts/test: PORTCULLIS_TEST_BIN_DIR, by default the build's).
export const binDir = process.env.PORTCULLIS_BIN_DIR ?? path.join(buildDir, 'handlers');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// fetch against the stack; `path` is relative to the base URL.
export async function http(pathname, { method = 'GET', headers = {}, body, form, json } = {}) {
  const h = { ...headers };
  let payload = body;
  if (form) {
    payload = new URLSearchParams(form).toString();
    h['content-type'] ??= 'application/x-www-form-urlencoded';
  }
  if (json !== undefined) {
    payload = typeof json === 'string' ? json : JSON.stringify(json);
    h['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + pathname, { method, headers: h, body: payload, redirect: 'manual' });
  const text = await res.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: parsed };
}

export function basic(id, secret) {
  const enc = (s) => encodeURIComponent(s);
  return 'Basic ' + Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64');
}

// A management token for the bootstrap client (every scope), or for the given credentials.
export async function managementToken(id = env.PORTCULLIS_CLIENT_ID, secret = env.PORTCULLIS_CLIENT_SECRET, scope) {
  const form = { grant_type: 'client_credentials' };
  if (scope) form.scope = scope;
  const r = await http('/oauth/token', { method: 'POST', form, headers: { authorization: basic(id, secret) } });
  if (r.status !== 200) throw new Error(`token request failed: ${r.status} ${r.text}`);
  return r.json.access_token;
}

// Runs the `portcullis` CLI against the test stack's config.
export function cli(...args) {
  return execFileSync(path.join(binDir, 'portcullis'), ['--config', configFile, ...args], {
    encoding: 'utf8',
  });
}

// Every family's error body shape (contract §0).
export function assertOAuthError(assert, r, status, error) {
  assert.equal(r.status, status, r.text);
  assert.match(r.headers.get('content-type'), /^application\/json/);
  assert.equal(typeof r.json?.error, 'string', r.text);
  if (error) assert.equal(r.json.error, error, r.text);
}
export function assertScimError(assert, r, status) {
  assert.equal(r.status, status, r.text);
  assert.match(r.headers.get('content-type'), /^application\/scim\+json/);
  assert.deepEqual(r.json.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
  assert.equal(r.json.status, String(status));
}
export function assertProblem(assert, r, status, code) {
  assert.equal(r.status, status, r.text);
  assert.match(r.headers.get('content-type'), /^application\/problem\+json/);
  assert.equal(r.json.status, status);
  assert.equal(r.json.type, 'about:blank');
  assert.equal(typeof r.json.title, 'string');
  if (code) assert.equal(r.json.code, code, r.text);
}

// JSON values must never be null (contract §0).
export function assertNoNulls(assert, value, where = '$') {
  if (value === null) assert.fail(`null at ${where}`);
  if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) assertNoNulls(assert, v, `${where}.${k}`);
  }
}

// The worker masters and their children, from the pid files run-local writes.
export function masterPid(family) {
  return Number(readFileSync(path.join(varDir, 'run', `${family}.pid`), 'utf8').trim());
}
export function childPids(pid) {
  const r = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean).map(Number).sort((a, b) => a - b);
}
export function workerSocket(family) {
  return path.join(varDir, 'run', `${family}.sock`);
}
export function families() {
  return readdirSync(path.join(varDir, 'run'))
    .filter((f) => f.endsWith('.pid'))
    .map((f) => f.replace(/\.pid$/, ''));
}

export function runLocal(...args) {
  return execFileSync(path.join(repoDir, 'scripts', 'run-local'), args, {
    encoding: 'utf8',
    env: { ...process.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

// Sends raw bytes to a unix or TCP socket and collects whatever comes back until the peer
// closes or `timeoutMs` passes.
export function rawExchange(target, bytes, timeoutMs = 3000) {
  return new Promise((resolve) => {
    const chunks = [];
    const sock = typeof target === 'string' ? net.connect(target) : net.connect(target.port, target.host);
    const done = () => {
      sock.destroy();
      resolve(Buffer.concat(chunks));
    };
    sock.setTimeout(timeoutMs, done);
    sock.on('data', (d) => chunks.push(d));
    sock.on('end', done);
    sock.on('error', done);
    sock.on('connect', () => sock.write(bytes));
  });
}

// A minimal FastCGI client (FCGI 1.0 records) for talking to a worker socket directly.
function record(type, requestId, content) {
  const padding = (8 - (content.length % 8)) % 8;
  const header = Buffer.alloc(8);
  header.writeUInt8(1, 0);
  header.writeUInt8(type, 1);
  header.writeUInt16BE(requestId, 2);
  header.writeUInt16BE(content.length, 4);
  header.writeUInt8(padding, 6);
  return Buffer.concat([header, content, Buffer.alloc(padding)]);
}
function nameValue(name, value) {
  const len = (n) => (n < 128 ? Buffer.from([n]) : (() => { const b = Buffer.alloc(4); b.writeUInt32BE((n | 0x80000000) >>> 0); return b; })());
  return Buffer.concat([len(Buffer.byteLength(name)), len(Buffer.byteLength(value)), Buffer.from(name), Buffer.from(value)]);
}
export function fastcgiRequestBytes(params, body = Buffer.alloc(0)) {
  const begin = Buffer.from([0, 1, 0, 0, 0, 0, 0, 0]); // role RESPONDER, no keep-conn
  const p = Buffer.concat(Object.entries(params).map(([k, v]) => nameValue(k, String(v))));
  const parts = [record(1, 1, begin)];
  for (let i = 0; i < p.length; i += 65535) parts.push(record(4, 1, p.subarray(i, i + 65535)));
  parts.push(record(4, 1, Buffer.alloc(0)));
  for (let i = 0; i < body.length; i += 65535) parts.push(record(5, 1, body.subarray(i, i + 65535)));
  parts.push(record(5, 1, Buffer.alloc(0)));
  return Buffer.concat(parts);
}
// Parses FCGI_STDOUT records into {status, headers, body}.
export function parseFastcgiResponse(buf) {
  let out = Buffer.alloc(0);
  for (let i = 0; i + 8 <= buf.length; ) {
    const type = buf.readUInt8(i + 1);
    const len = buf.readUInt16BE(i + 4);
    const pad = buf.readUInt8(i + 6);
    if (type === 6) out = Buffer.concat([out, buf.subarray(i + 8, i + 8 + len)]);
    i += 8 + len + pad;
  }
  const text = out.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const body = split < 0 ? '' : text.slice(split + 4);
  const headers = {};
  for (const line of head.split('\r\n')) {
    const c = line.indexOf(':');
    if (c > 0) headers[line.slice(0, c).toLowerCase()] = line.slice(c + 1).trim();
  }
  return { status: Number((headers.status ?? '0').split(' ')[0]), headers, body };
}

// Runs one read-only SQL statement against the test stack's database with the `mariadb`
// client and returns the rows as arrays of strings (tab-separated batch output). For checks of
// what no API shows yet (recorded events, counters); never for setting up state behind the
// service's back.
function mariadbClient() {
  const conf = parseEnvFile(configFile);
  const password = readFileSync(conf.PORTCULLIS_DB_PASSWORD_FILE, 'utf8').trim();
  return {
    args: ['--socket', conf.PORTCULLIS_DB_SOCKET, '-u', conf.PORTCULLIS_DB_USER, '-N', '-B', conf.PORTCULLIS_DB_NAME],
    env: { ...process.env, MYSQL_PWD: password },
  };
}
export function dbQuery(sql) {
  const { args, env } = mariadbClient();
  const out = execFileSync('mariadb', [...args, '-e', sql], { encoding: 'utf8', env });
  return out.split('\n').filter(Boolean).map((line) => line.split('\t'));
}

// Holds the locks of one `SELECT … FOR UPDATE` in an open REPEATABLE READ transaction (so the
// gaps between and around the rows it reads are locked too: no row can be inserted there)
// until `release()` rolls it back. It writes nothing; it makes any write of the service to those
// rows wait, at a moment the test chooses.
export async function dbHoldLocks(select) {
  const { args, env } = mariadbClient();
  const client = spawn('mariadb', ['--unbuffered', ...args], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => client.on('exit', resolve));
  let out = '';
  await new Promise((resolve, reject) => {
    client.stdout.on('data', (d) => {
      out += d;
      if (out.includes('locks held')) resolve();
    });
    exited.then((code) => reject(new Error(`mariadb exited (${code}) before holding the locks of: ${select}`)));
    client.stdin.write(`SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;\nSTART TRANSACTION;\n${select};\nSELECT 'locks held';\n`);
  });
  return {
    release: async () => {
      client.stdin.end('ROLLBACK;\n');
      await exited;
    },
  };
}
