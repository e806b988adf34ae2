// `portcullis doctor` (docs/operations.md §5): healthy on the running test stack, and each
// thing it checks, broken on purpose in a copy of the config, turns into a FAIL line and a
// non-zero exit. Nothing here changes the stack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { buildDir, configFile } from './harness.mjs';

const binary = path.join(buildDir, 'handlers', 'portcullis');

function doctor(config) {
  const r = spawnSync(binary, ['--config', config, 'doctor'], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

// A copy of the stack's config with some settings replaced.
function configWith(changes) {
  const dir = mkdtempSync(path.join(tmpdir(), 'doctor-'));
  let text = readFileSync(configFile, 'utf8');
  for (const [key, value] of Object.entries(changes)) {
    text = text.split('\n').filter((l) => !l.startsWith(`${key}=`)).join('\n') + `\n${key}=${value}\n`;
  }
  const file = path.join(dir, 'portcullis.conf');
  writeFileSync(file, text);
  return { file };
}

test('doctor reports the test stack healthy', () => {
  const { code, out } = doctor(configFile);
  assert.equal(code, 0, out);
  for (const check of ['config', 'master key', 'database', 'schema', 'keys']) {
    assert.match(out, new RegExp(`^ok +${check} `, 'm'), `${check} ok in:\n${out}`);
  }
  assert.match(out, /migrations applied/);
  assert.match(out, /signing key \S+ active, readable with the master key/);
  assert.match(out, /^doctor: healthy$/m);
});

test('doctor fails on a master key that cannot open the signing keys', () => {
  const key = path.join(mkdtempSync(path.join(tmpdir(), 'doctor-')), 'master.key');
  writeFileSync(key, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
  const broken = configWith({ PORTCULLIS_MASTER_KEY_FILE: key }).file;
  const { code, out } = doctor(broken);
  assert.equal(code, 1, out);
  assert.match(out, /^ok +database /m);
  assert.match(out, /^FAIL +keys +\d+ signing key\(s\) stored, none active and readable with this master key/m);
  assert.match(out, /^doctor: 1 check\(s\) failed$/m);
});

test('doctor fails on a database it cannot reach, and says which', () => {
  const broken = configWith({ PORTCULLIS_DB_SOCKET: '/nonexistent/mysqld.sock' }).file;
  const { code, out } = doctor(broken);
  assert.equal(code, 1, out);
  assert.match(out, /^FAIL +database +cannot connect to \/nonexistent\/mysqld.sock/m);
  assert.match(out, /^FAIL +schema /m);
});

test('doctor fails on a configuration that does not load', () => {
  const broken = configWith({ PORTCULLIS_BASE_URL: 'not a url' }).file;
  const { code, out } = doctor(broken);
  assert.equal(code, 1, out);
  assert.match(out, /^FAIL +config /m);
});
