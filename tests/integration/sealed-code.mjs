// The sealed authorization code's format (lib/tokens/sealed_code.h, docs/oauth.md "The code"),
// written again from its description: the tests open the codes the stack issues and seal codes
// of their own (expired, for a user or resource that is gone, under another key) with the test
// stack's master key.
import { readFileSync } from 'node:fs';
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { configFile } from './harness.mjs';

const LABEL = 'portcullis.authorization-code.v1';
const AAD = Buffer.concat([Buffer.from([1]), Buffer.from('authorization_code')]);
const SALT = 12;
// [name, length width: 1 or 2 bytes, or 0 for a 16-byte digest without one].
const FIELDS = [['grant_id', 1], ['client_digest', 0], ['redirect_uri_digest', 0], ['resource_id', 1], ['user_id', 1],
  ['code_challenge', 1], ['scope', 2], ['organization_id', 1], ['dpop_jkt', 1]];
// Travel as their 32 bytes when they are the base64url of a SHA-256.
const DIGEST_TEXT = new Set(['code_challenge', 'dpop_jkt']);

export const bindingDigest = (value) => createHash('sha256').update(value).digest().subarray(0, 16);

export function masterKey() {
  const conf = Object.fromEntries(readFileSync(configFile, 'utf8').split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  return Buffer.from(readFileSync(conf.PORTCULLIS_MASTER_KEY_FILE, 'utf8').trim(), 'base64');
}

const keyFor = (master, salt) => Buffer.from(hkdfSync('sha256', master, salt, LABEL, 32));

// `fields`: the strings above (the digests as Buffers), auth_time and expires_at (seconds).
export function sealCode(fields, master = masterKey()) {
  const parts = [Buffer.from([1])];
  for (const [name, width] of FIELDS) {
    let value = Buffer.isBuffer(fields[name]) ? fields[name] : Buffer.from(fields[name] ?? '');
    if (DIGEST_TEXT.has(name) && value.length) {
      const raw = Buffer.from(value.toString(), 'base64url');
      if (raw.length === 32 && raw.toString('base64url') === value.toString()) value = raw;
    }
    if (width) {
      const length = Buffer.alloc(width);
      length.writeUIntBE(value.length, 0, width);
      parts.push(length);
    }
    parts.push(value);
  }
  for (const name of ['auth_time', 'expires_at']) {
    const n = Buffer.alloc(8);
    n.writeBigInt64BE(BigInt(fields[name]));
    parts.push(n);
  }
  const salt = randomBytes(SALT);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(master, salt), nonce);
  cipher.setAAD(AAD);
  const body = Buffer.concat([cipher.update(Buffer.concat(parts)), cipher.final()]);
  return Buffer.concat([salt, Buffer.from([1]), nonce, body, cipher.getAuthTag()]).toString('base64url');
}

// The fields of a code, or null when it does not open with `master`.
export function openCode(code, master = masterKey()) {
  const raw = Buffer.from(code, 'base64url');
  if (raw.length < SALT + 1 + 12 + 16 || raw[SALT] !== 1) return null;
  const salt = raw.subarray(0, SALT);
  const nonce = raw.subarray(SALT + 1, SALT + 13);
  const decipher = createDecipheriv('aes-256-gcm', keyFor(master, salt), nonce);
  decipher.setAAD(AAD);
  decipher.setAuthTag(raw.subarray(raw.length - 16));
  let plain;
  try {
    plain = Buffer.concat([decipher.update(raw.subarray(SALT + 13, raw.length - 16)), decipher.final()]);
  } catch {
    return null;
  }
  if (plain[0] !== 1) return null;
  const out = {};
  let at = 1;
  for (const [name, width] of FIELDS) {
    const n = width ? plain.readUIntBE(at, width) : 16;
    at += width;
    const value = plain.subarray(at, at + n);
    at += n;
    if (!width) out[name] = Buffer.from(value);
    else if (DIGEST_TEXT.has(name) && n === 32) out[name] = value.toString('base64url');
    else out[name] = value.toString('utf8');
  }
  out.auth_time = Number(plain.readBigInt64BE(at));
  out.expires_at = Number(plain.readBigInt64BE(at + 8));
  if (at + 16 !== plain.length) return null;
  return out;
}
