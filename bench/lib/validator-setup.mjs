// bench/mcp-validator's setup: a resource on the running stack, an access token for it signed
// with the stack's key, and an nginx (the MCP server's) serving one small file twice: plainly
// (the static ceiling) and behind Portcullis' auth_request snippet. Prints shell assignments.
// Environment: PORTCULLIS_VAR_DIR, PORTCULLIS_TEST_ENV (the stack's local.env), BENCH_PORT,
// BENCH_NGINX_CACHE (1: the micro-cache variant, nginx/portcullis/mcp-validate-cached.conf),
// BENCH_FASTCGI_KEEPALIVE (idle kept-alive connections to the pool per nginx process, default 32
// as docs/protecting-mcp-servers.md recommends; 0: one connection per validation).
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { http, managementToken, varDir } from '../../tests/integration/harness.mjs';
import { startProtectedNginx, mintAccessToken, validateLocation } from '../../tests/integration/mcp-nginx.mjs';

const port = Number(process.env.BENCH_PORT ?? 18990);
const cached = process.env.BENCH_NGINX_CACHE === '1';
const keepalive = Number(process.env.BENCH_FASTCGI_KEEPALIVE ?? 32);
const admin = { authorization: `Bearer ${await managementToken()}` };
const r = await http('/api/v1/resources', {
  method: 'POST', headers: admin,
  json: { name: 'bench', server_url: `http://127.0.0.1:${port}/bench-${randomBytes(4).toString('hex')}`,
    scopes: [{ name: 'bench:read', description: 'Bench' }], access_token_ttl_seconds: 3600 },
});
if (r.status !== 201) throw new Error(`resource: ${r.status} ${r.text}`);
const token = await mintAccessToken(r.json, { scope: 'bench:read', exp: Math.floor(Date.now() / 1000) + 3600 });
const name = 'bench-mcp-nginx';
mkdirSync(path.join(varDir, name, 'html'), { recursive: true });
writeFileSync(path.join(varDir, name, 'html', 'probe.json'), '{"status":"ok","probe":"static"}\n');
const nginx = await startProtectedNginx({
  port, resourceId: r.json.id, name, workers: 'auto',
  // The zone mcp-validate-cached.conf names (docs/protecting-mcp-servers.md, micro-cache).
  httpBody: [
    cached ? '    fastcgi_cache_path {prefix}/cache levels=1:2 keys_zone=portcullis_auth:10m max_size=64m inactive=60s use_temp_path=off;' : '',
    keepalive > 0 ? '    fastcgi_keep_conn on;' : '',
  ].join('\n'),
  upstreamBody: keepalive > 0 ? `keepalive ${keepalive}; keepalive_timeout 1s; keepalive_requests 1000; keepalive_time 5s;` : '',
  serverBody: `${validateLocation('read', 'bench:read', cached ? 'mcp-validate-cached.conf' : 'mcp-validate.conf')}
        location = /static/probe.json { alias {prefix}/html/probe.json; default_type application/json; }
        location = /protected/probe.json {
            auth_request /_portcullis/auth/read;
            include portcullis/mcp-protect.conf;
            alias {prefix}/html/probe.json;
            default_type application/json;
        }`,
});
console.log(`BENCH_URL=${nginx.url}`);
console.log(`BENCH_PREFIX=${nginx.prefix}`);
console.log(`BENCH_TOKEN=${token}`);
