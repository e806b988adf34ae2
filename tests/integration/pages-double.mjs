// The sign-in pages behind a private nginx, served by the test-only worker
// portcullis-oauth-pages-double (tests/support: the real handlers wired to a LoginFlow double
// over the login_requests table), for the browser test. The test stack's portcullis-oauth does
// not serve these pages until the authorization side wires its LoginFlow in.
//
// TODO(when the lead's LoginFlow lands): drop this file and run signin-pages.test.mjs against
// the test stack itself.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, copyFileSync, openSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { buildDir, configFile, varDir, sleep } from './harness.mjs';

const PATH = `${process.env.PATH}:/usr/sbin:/sbin`;

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function settings() {
  const out = {};
  for (const line of readFileSync(configFile, 'utf8').split('\n')) {
    const m = line.match(/^([A-Z0-9_]+)=(.*)$/);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

// Runs SQL on the test stack's database through the mariadb client (its socket and account).
export function sql(statement) {
  const s = settings();
  return execFileSync('mariadb', ['--socket', s.PORTCULLIS_DB_SOCKET, '-u', s.PORTCULLIS_DB_USER,
    '--batch', '--skip-column-names', s.PORTCULLIS_DB_NAME, '-e', statement], {
    encoding: 'utf8',
    env: { PATH, MYSQL_PWD: readFileSync(s.PORTCULLIS_DB_PASSWORD_FILE, 'utf8').trim() },
  });
}

// A SQL string literal (MariaDB's default mode: backslash escapes too).
const quote = (v) => `'${String(v).replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

// Inserts a login request in the double's params format (tests/support/db_login_flow.h);
// the honest stand-in for /oauth/authorize until it exists. Returns {id, csrf}.
export function insertLoginRequest({ redirectUri, state, loginHint = '', clientName, clientHost = '',
  resourceName, scopes }) {
  const rand = () => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url');
  const id = rand();
  const csrf = rand();
  const params = {
    redirect_uri: redirectUri, scope: scopes.map((s) => s.name).join(' '), state, login_hint: loginHint,
    test_client_name: clientName, test_client_host: clientHost, test_resource_name: resourceName,
    test_scopes: scopes,
  };
  sql(`INSERT INTO login_requests (id, client_id, resource_id, params, csrf_token, create_time, expires_at)
       VALUES (${quote(id)}, 'dcr_browser_test', 'res_browser_test', ${quote(JSON.stringify(params))},
       ${quote(csrf)}, UTC_TIMESTAMP(6), UNIX_TIMESTAMP() + 600)`);
  return { id, csrf };
}

// Starts the double worker and an nginx rendered from the test stack's own configuration (same
// locations, same error rewriting), listening on a free port. Returns {baseUrl, stop}.
export async function startPagesDouble() {
  const dir = path.join(varDir, 'pages-double');
  rmSync(dir, { recursive: true, force: true });
  const prefix = path.join(dir, 'nginx');
  for (const d of ['conf/portcullis', 'tmp/client_body', 'tmp/fastcgi', 'tmp/proxy', 'tmp/scgi', 'tmp/uwsgi', 'html']) {
    mkdirSync(path.join(prefix, d), { recursive: true });
  }
  mkdirSync(path.join(dir, 'log'), { recursive: true });
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const socket = path.join(dir, 'oauth.sock');
  const stackConf = path.join(varDir, 'nginx', 'conf');
  for (const f of readdirSync(path.join(stackConf, 'portcullis'))) {
    copyFileSync(path.join(stackConf, 'portcullis', f), path.join(prefix, 'conf', 'portcullis', f));
  }
  const conf = readFileSync(path.join(stackConf, 'nginx.conf'), 'utf8')
    .replaceAll(path.join(varDir, 'nginx'), prefix)
    .replace(/^pid\s+[^;]+;/m, `pid ${path.join(dir, 'nginx.pid')};`)
    .replace(/^error_log\s+[^;]+;/m, `error_log ${path.join(dir, 'log', 'nginx-error.log')} warn;`)
    .replace(/access_log\s+[^;]+;/, `access_log ${path.join(dir, 'log', 'nginx-access.log')} portcullis_json;`)
    .replace(/worker_processes\s+[^;]+;/, 'worker_processes 1;')
    .replace(/listen\s+[^;]+;/, `listen 127.0.0.1:${port};`)
    .replace(/upstream portcullis_oauth\s*\{[^}]*\}/, `upstream portcullis_oauth { server unix:${socket}; }`);
  const confFile = path.join(prefix, 'conf', 'nginx.conf');
  writeFileSync(confFile, conf);

  const log = openSync(path.join(dir, 'log', 'oauth-double.log'), 'a');
  const worker = spawn(path.join(buildDir, 'tests', 'portcullis-oauth-pages-double'),
    ['--config', configFile, '--socket', socket, '--workers', '2'],
    { env: { PATH, PORTCULLIS_BASE_URL: baseUrl }, stdio: ['ignore', log, log] });
  const nginxArgs = ['-p', prefix, '-c', confFile, '-e', path.join(dir, 'log', 'nginx-error.log')];
  execFileSync('nginx', nginxArgs, { env: { PATH }, stdio: 'inherit' });

  const stop = async () => {
    try {
      execFileSync('nginx', [...nginxArgs, '-s', 'quit'], { env: { PATH }, stdio: 'ignore' });
    } catch { /* already gone */ }
    if (worker.exitCode === null) {
      const exited = new Promise((r) => worker.once('exit', r));
      worker.kill('SIGTERM');
      await exited;
    }
  };
  // Ready when the worker answers through nginx: an unknown login request is a 400 page.
  for (let i = 0; i < 100; i++) {
    if (existsSync(socket)) {
      try {
        const r = await fetch(`${baseUrl}/oauth/login?login_request_id=probe`);
        if (r.status === 400 && (r.headers.get('content-type') ?? '').startsWith('text/html')) {
          return { baseUrl, stop, logDir: path.join(dir, 'log') };
        }
      } catch { /* not yet */ }
    }
    await sleep(100);
  }
  await stop();
  throw new Error(`the pages double did not come up; see ${path.join(dir, 'log')}`);
}
