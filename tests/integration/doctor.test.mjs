// `portcullis doctor` (docs/operations.md §5): healthy on the running test stack, and each
// thing it checks, broken on purpose in a copy of the config, turns into a FAIL line and a
// non-zero exit. The signing keys are checked per algorithm a resource uses, as `/readyz`
// does. Nothing here changes the stack but one resource, created and deleted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { binDir, configFile, http } from './harness.mjs';
import { api, unique } from './management.mjs';

const binary = path.join(binDir, 'portcullis');

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
  assert.match(out, /^FAIL +keys +RS256: \d+ signing key\(s\) stored, none active and readable with this master key/m);
  assert.doesNotMatch(out, /^ok +keys /m);
  // One failed check per algorithm needed (RS256, and those resources of other tests use).
  const failed = out.match(/^FAIL +keys /gm).length;
  assert.match(out, new RegExp(`^doctor: ${failed} check\\(s\\) failed$`, 'm'));
});

test('doctor and /readyz check the key of every algorithm a resource signs with', async () => {
  const created = await api('POST', '/api/v1/resources', {
    json: { name: `Doctor ${unique()}`, server_url: `https://doctor-${unique()}.example.com/mcp`, access_token_signing_alg: 'EdDSA' },
  });
  assert.equal(created.status, 201, created.text);
  try {
    const { code, out } = doctor(configFile);
    assert.equal(code, 0, out);
    assert.match(out, /^ok +keys +RS256 signing key \S+ active, readable with the master key \(management tokens and \d+ resource\(s\)\)$/m);
    const eddsa = out.match(/^ok +keys +EdDSA signing key \S+ active, readable with the master key \((\d+) resource\(s\)\)$/m);
    assert.ok(eddsa, out);
    assert.ok(Number(eddsa[1]) >= 1);
    const ready = await http('/readyz');
    assert.equal(ready.status, 200, ready.text);
    assert.equal(ready.json.checks.signing_keys.RS256, 'ok');
    assert.equal(ready.json.checks.signing_keys.EdDSA, 'ok');
    // With a master key that opens none of them, each needed algorithm is its own FAIL.
    const key = path.join(mkdtempSync(path.join(tmpdir(), 'doctor-')), 'master.key');
    writeFileSync(key, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    const broken = doctor(configWith({ PORTCULLIS_MASTER_KEY_FILE: key }).file);
    assert.equal(broken.code, 1, broken.out);
    assert.match(broken.out, /^FAIL +keys +EdDSA: \d+ signing key\(s\) stored, none active and readable with this master key .*; \d+ resource\(s\) need one$/m);
    assert.match(broken.out, /^FAIL +keys +RS256: .*; management tokens and \d+ resource\(s\) need one$/m);
  } finally {
    assert.equal((await api('DELETE', `/api/v1/resources/${created.json.id}`)).status, 204);
  }
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
