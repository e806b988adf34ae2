// Helpers for protecting an MCP server with Portcullis' nginx snippets (nginx/portcullis/mcp-*.conf)
// exactly as an operator would: a second, private nginx — the MCP server's own — that includes
// the snippets and reaches the test stack's portcullis-wellknown worker over its socket. Also a
// signer that mints access tokens with the stack's real current signing key (unsealed with
// the test stack's master key), for the token shapes a browser flow cannot produce on demand
// (expired, another audience).
import { mkdirSync, writeFileSync, readFileSync, cpSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { createDecipheriv, createPrivateKey, randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { SignJWT } from 'jose';
import { repoDir, varDir, baseUrl, sleep } from './harness.mjs';

function settings() {
  const out = {};
  for (const line of readFileSync(path.join(varDir, 'portcullis.conf'), 'utf8').split('\n')) {
    const m = line.match(/^([A-Z0-9_]+)=(.*)$/);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

// A TCP port on 127.0.0.1 that nothing listens on right now.
export async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const p = s.address().port;
  await new Promise((r) => s.close(r));
  return p;
}

// Resolves once something accepts connections on 127.0.0.1:`port`; throws after `ms`.
export async function waitForPort(port, ms = 5000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`nothing listens on ${port}`);
}

// The location nginx's auth_request calls (`auth_request /_portcullis/auth/<name>;`): the
// validator snippet (`snippet`, e.g. mcp-validate-cached.conf) with the scopes it requires.
export const validateLocation = (name, scopes, snippet = 'mcp-validate.conf') => `
        location = /_portcullis/auth/${name} {
            include portcullis/${snippet};
            fastcgi_param PORTCULLIS_REQUIRED_SCOPES "${scopes}";
        }`;

// Starts an nginx on 127.0.0.1:`port` whose server block is `serverBody` (nginx text that may use
// the snippets), with $portcullis_resource_id set to `resourceId`; `httpBody` goes into http {}.
// `{prefix}` in either is replaced by the nginx prefix; `upstreamBody` goes into the upstream
// portcullis_wellknown {} (e.g. a keepalive); `socket` is the wellknown pool's (the stack's by
// default). Returns { url, stop, prefix }.
export async function startProtectedNginx({ port, resourceId, serverBody, httpBody = '', upstreamBody = '', workers = 1, name = `mcp-nginx-${port}`, socket }) {
  const prefix = path.join(varDir, name);
  for (const d of ['conf/portcullis', 'logs', 'tmp']) mkdirSync(path.join(prefix, d), { recursive: true });
  cpSync(path.join(repoDir, 'nginx', 'portcullis'), path.join(prefix, 'conf', 'portcullis'), { recursive: true });
  const run = path.join(varDir, 'run');
  const user = process.getuid?.() === 0 ? 'user root;' : '';
  writeFileSync(path.join(prefix, 'conf', 'nginx.conf'), `${user}
worker_processes ${workers};
pid ${prefix}/logs/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log ${prefix}/logs/access.log combined buffer=64k flush=1s;
    sendfile on;
    keepalive_requests 100000;
${httpBody.replaceAll('{prefix}', prefix)}
    client_body_temp_path ${prefix}/tmp/body; fastcgi_temp_path ${prefix}/tmp/fastcgi;
    proxy_temp_path ${prefix}/tmp/proxy; scgi_temp_path ${prefix}/tmp/scgi; uwsgi_temp_path ${prefix}/tmp/uwsgi;
    upstream portcullis_wellknown { server unix:${socket ?? `${run}/wellknown.sock`}; ${upstreamBody} }
    server {
        listen 127.0.0.1:${port};
        set $portcullis_resource_id ${resourceId};
        include portcullis/mcp-server.conf;
${serverBody.replaceAll('{prefix}', prefix)}
    }
}
`);
  const args = ['-p', prefix, '-c', 'conf/nginx.conf', '-e', path.join(prefix, 'logs', 'error.log')];
  const t = spawnSync('nginx', [...args, '-t', '-q'], { encoding: 'utf8' });
  if (t.status !== 0) throw new Error(`nginx -t failed: ${t.stderr}`);
  execFileSync('nginx', args);
  await waitForPort(port);
  return {
    url: `http://127.0.0.1:${port}`,
    prefix,
    stop() {
      spawnSync('nginx', [...args, '-s', 'stop']);
    },
  };
}

// Rows of a read-only query against the test stack's database (tab-separated cells).
export function sqlRows(query) {
  const s = settings();
  const out = execFileSync('mariadb', ['--socket', s.PORTCULLIS_DB_SOCKET, '-u', s.PORTCULLIS_DB_USER,
    `-p${readFileSync(s.PORTCULLIS_DB_PASSWORD_FILE, 'utf8').trim()}`, '-N', '-B', '-e', query, s.PORTCULLIS_DB_NAME],
  { encoding: 'utf8' });
  return out.split('\n').filter((l) => l !== '').map((l) => l.split('\t'));
}

// The current signing key of `alg` (RS256, ES256, EdDSA) of the test stack, or its key `keyId`
// whatever its state, as a KeyObject, with its kid.
export function currentSigningKey(alg = 'RS256', keyId = undefined) {
  if (!['RS256', 'ES256', 'EdDSA'].includes(alg)) throw new Error(`no keys of ${alg}`);
  if (keyId !== undefined && !/^key_[0-9a-z]{26}$/.test(keyId)) throw new Error(`not a key id: ${keyId}`);
  const [[kid, hex]] = sqlRows(`SELECT id, HEX(private_key_sealed) FROM signing_keys WHERE algorithm = '${alg}' AND ` +
    (keyId !== undefined ? `id = '${keyId}'`
      : 'activates_at <= UNIX_TIMESTAMP() AND (expires_at IS NULL OR expires_at > UNIX_TIMESTAMP()) ' +
        'ORDER BY activates_at DESC LIMIT 1'));
  const s = settings();
  const sealed = Buffer.from(hex, 'hex');
  const masterKey = Buffer.from(readFileSync(s.PORTCULLIS_MASTER_KEY_FILE, 'utf8').trim(), 'base64');
  // lib/crypto/aead.h: 0x01 | nonce(12) | ciphertext | tag(16), aad = 0x01 || kid.
  const decipher = createDecipheriv('aes-256-gcm', masterKey, sealed.subarray(1, 13));
  decipher.setAAD(Buffer.concat([Buffer.from([1]), Buffer.from(kid)]));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  const der = Buffer.concat([decipher.update(sealed.subarray(13, sealed.length - 16)), decipher.final()]);
  return { kid, key: createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }) };
}

// An access token shaped like Portcullis' (contract §4) for `resource` (from the API), signed
// with the stack's current key of `alg` (or its key `kid`); `overrides` replace claims (undefined
// removes one).
export async function mintAccessToken(resource, overrides = {}, { typ = 'at+jwt', alg = 'RS256', kid: keyId } = {}) {
  const { kid, key } = currentSigningKey(alg, keyId);
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: `${baseUrl}/resources/${resource.id}`, sub: 'usr_minted', aud: resource.server_url,
    client_id: 'dcr_minted', scope: 'demo:read', iat: now, nbf: now, exp: now + 300,
    jti: randomBytes(16).toString('base64url'), ...overrides,
  };
  for (const k of Object.keys(claims)) if (claims[k] === undefined) delete claims[k];
  return new SignJWT(claims).setProtectedHeader({ alg, typ, kid }).sign(key);
}

