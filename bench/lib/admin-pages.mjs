// bench/admin-pages' seeding and measurements (see there). `seed`: what the management API
// makes (organizations, domains, SCIM directories, SAML connections, resources, API clients, a
// webhook, the environment administrator) plus, straight into the database, the webhook's
// delivery log and the seeded events' links to real subjects. `measure`: signs in to the portal
// as the environment administrator (the e-mailed code, as tests/integration/admin-portal.test.mjs
// does) and GETs every page BENCH_PAGE_REQUESTS times, one request at a time; the server time of
// each is the admin worker's own `duration_us` (its access-log line, matched by X-Request-Id).
// Environment from bench/admin-pages: BENCH_STATE, BENCH_DB_CNF, BENCH_DB_ADMIN, BENCH_DB_NAME,
// BENCH_ORGANIZATION_ID, BENCH_USERS, BENCH_DELIVERIES, PORTCULLIS_VAR_DIR, PORTCULLIS_TEST_ENV.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { http, managementToken, baseUrl, varDir, sleep } from '../../tests/integration/harness.mjs';
import { Browser, signInWithCode } from '../../tests/integration/browser.mjs';
import { idpMetadata } from '../../tests/integration/sso-fixtures.mjs';

const stateFile = process.env.BENCH_STATE;
const org = process.env.BENCH_ORGANIZATION_ID;
const requests = Number(process.env.BENCH_PAGE_REQUESTS ?? 30);
const depth = Number(process.env.BENCH_PAGE_DEPTH ?? 20);

function sql(statement) {
  return execFileSync('mariadb', [`--defaults-file=${process.env.BENCH_DB_CNF}`, `-u${process.env.BENCH_DB_ADMIN}`,
    '-N', '-B', process.env.BENCH_DB_NAME, '-e', statement], { encoding: 'utf8', maxBuffer: 1 << 26 }).trim();
}
const quote = (s) => `'${String(s).replace(/[\\']/g, (c) => `\\${c}`)}'`;

let token;
async function api(method, pathname, json) {
  token ??= await managementToken();
  const r = await http(pathname, { method, json, headers: { authorization: `Bearer ${token}` } });
  if (r.status >= 300) throw new Error(`${method} ${pathname}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.json;
}
// `count` calls of make(i), `width` at a time.
async function many(count, make, width = 8) {
  const out = new Array(count);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < count) {
      const i = next++;
      out[i] = await make(i);
    }
  }));
  return out;
}

async function seed() {
  const suffix = Date.now().toString(36);
  const started = Date.now();
  const admin = await api('POST', '/api/v1/users', { email: `bench-admin-${suffix}@example.com` });
  await api('PATCH', `/api/v1/users/${admin.id}`, { environment_roles: ['admin'] });
  await many(Number(process.env.BENCH_ORGANIZATIONS ?? 1000), (i) =>
    api('POST', '/api/v1/organizations', { display_name: `Bench org ${i} (${suffix})` }));
  const domains = await many(25, (i) =>
    api('POST', `/api/v1/organizations/${org}/domains`, { domain: `d${i}-${suffix}.example.com` }));
  const directories = await many(3, (i) =>
    api('POST', `/api/v1/organizations/${org}/directories`, { name: `Directory ${i}` }), 1);
  const connections = await many(3, (i) => api('POST', `/api/v1/organizations/${org}/connections`, {
    type: 'saml', name: `SAML IdP ${i}`, idp_metadata_xml: idpMetadata(`https://idp${i}-${suffix}.example.com/metadata`),
  }), 1);
  const resources = await many(40, (i) => api('POST', '/api/v1/resources', {
    name: `Bench MCP ${i}`, server_url: `https://mcp${i}-${suffix}.example.com/mcp`, dcr_enabled: true,
    scopes: [{ name: 'files:read', description: 'Read files' }, { name: 'files:write', description: 'Write files' }],
  }));
  await many(30, (i) => api('POST', '/api/v1/clients', { name: `bench-${suffix}-${i}`, scopes: ['users:read'] }));
  // A type nothing in the bench records: the endpoint gets only the seeded delivery log.
  const webhook = await api('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/bench-hook', event_types: ['scim.group.deleted'] });
  const deliveries = Number(process.env.BENCH_DELIVERIES ?? 200000);
  log(`API objects made in ${((Date.now() - started) / 1000).toFixed(0)} s; ${deliveries} deliveries`);
  // The newest seeded events, delivered once each with one attempt (what a healthy endpoint
  // subscribed to every type leaves behind), in chunks.
  // (bench/events' ids are evt_0 and 25 digits, below every real ULID's evt_01….)
  const newest = sql(`SELECT id FROM events WHERE id < 'evt_01' ORDER BY id DESC LIMIT 1`);
  const top = Number(newest.slice(5));
  for (let hi = top; hi > top - deliveries; hi -= 50000) {
    const lo = Math.max(top - deliveries + 1, hi - 49999);
    const range = `e.id BETWEEN CONCAT('evt_0', LPAD(${lo}, 25, '0')) AND CONCAT('evt_0', LPAD(${hi}, 25, '0'))`;
    sql(`START TRANSACTION;
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, state, attempts, next_attempt_at, last_status,
                                      create_time, update_time)
        SELECT CONCAT('msg_', SUBSTRING(e.id, 5), '_', SUBSTRING(${quote(webhook.id)}, 4)), ${quote(webhook.id)}, e.id,
               'delivered', 1, e.occurred_at, 200, e.occurred_at, e.occurred_at + INTERVAL 40000 MICROSECOND
        FROM events e WHERE ${range};
      INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, response_excerpt)
        SELECT CONCAT('msg_', SUBSTRING(e.id, 5), '_', SUBSTRING(${quote(webhook.id)}, 4)), 1,
               e.occurred_at + INTERVAL 5000 MICROSECOND, 200, 35, 'ok'
        FROM events e WHERE ${range};
      COMMIT;`);
  }
  // The seeded events name made-up subjects (bench/events): one of each kind becomes a real one,
  // so the filtered event pages and the user's page read realistic slices.
  const user = sql(`SELECT id, email FROM users WHERE id IN (SELECT user_id FROM memberships WHERE organization_id = ${quote(org)})
                    ORDER BY create_time DESC, id DESC LIMIT 1 OFFSET ${Math.floor(Number(process.env.BENCH_USERS) / 2)}`).split('\t');
  sql(`UPDATE events SET user_id = ${quote(user[0])} WHERE user_id = CONCAT('usr_0', LPAD(42, 25, '0'));
       UPDATE events SET organization_id = ${quote(org)} WHERE organization_id = 'org_bench0';
       UPDATE events SET resource_id = ${quote(resources[0].id)} WHERE resource_id = CONCAT('res_0', LPAD(0, 25, '0'));
       ANALYZE TABLE webhook_deliveries, webhook_attempts, events`);
  const state = {
    admin_email: admin.email, user_id: user[0], user_email: user[1], webhook_id: webhook.id,
    resource_id: resources[0].id, domain_id: domains[0].id, directory_id: directories[0].id,
    connection_id: connections[0].id, client_id: 'bench-client-7',
  };
  writeFileSync(stateFile, JSON.stringify(state, null, 2));
  log(`seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

function log(msg) {
  process.stderr.write(`[admin-pages] ${msg}\n`);
}

// The admin worker's duration_us per request id, from its log (the line follows the response).
function serverTimes(ids) {
  const want = new Set(ids);
  const out = new Map();
  const file = path.join(varDir, 'log', 'admin.log');
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('"request_id"')) continue;
    let l;
    try {
      l = JSON.parse(line);
    } catch {
      continue;
    }
    if (l.msg === 'request' && want.has(l.request_id)) out.set(l.request_id, l.duration_us / 1000);
  }
  return out;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
const nextLinks = (html) => [...html.matchAll(/<a href="([^"]+)" rel="next">/g)].map((m) => m[1].replace(/&amp;/g, '&'));

async function measure() {
  const state = JSON.parse(readFileSync(stateFile, 'utf8'));
  const b = new Browser();
  const first = await b.follow(`${baseUrl}/admin`);
  let page = await signInWithCode(b, first, state.admin_email);
  for (let i = 0; i < 10 && page.location && page.location.startsWith(baseUrl); i++) page = await b.request(page.location);
  if (page.status !== 200 || !/Overview|overview/.test(page.html)) throw new Error(`sign-in: ${page.status} ${page.url}`);

  async function get(url) {
    const r = await b.request(baseUrl + url);
    if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${r.html.slice(0, 300)}`);
    return r;
  }
  // The page `hops` Next links into a list (the n-th "next" link of the page when it has several).
  async function deep(url, hops, which = 0) {
    let at = url;
    for (let i = 0; i < hops; i++) {
      const links = nextLinks((await get(at)).html);
      if (!links[which]) throw new Error(`no next link ${which} on ${at}`);
      at = links[which];
    }
    return at;
  }
  const since = new Date(Date.now() - 7 * 86400e3).toISOString().replace(/\.\d+Z$/, 'Z');
  const until = new Date(Date.now() - 3 * 86400e3).toISOString().replace(/\.\d+Z$/, 'Z');
  const o = `/admin/organizations/${org}`;
  const pages = [
    ['overview', '/admin'],
    ['resources', '/admin/resources'],
    ['a resource', `/admin/resources/${state.resource_id}`],
    ['organizations', '/admin/organizations'],
    [`organizations, page ${depth + 1} (Next links)`, await deep('/admin/organizations', depth)],
    ['an organization (members, domains, connections, directories)', o],
    [`its members, page ${depth + 1} (Next links)`, await deep(o, depth, nextLinks((await get(o)).html).length - 1)],
    ['a domain', `${o}/domains/${state.domain_id}`],
    ['an SSO connection', `${o}/connections/${state.connection_id}`],
    ['a SCIM directory', `${o}/directories/${state.directory_id}`],
    ['users', '/admin/users'],
    [`users, page ${depth + 1} (Next links)`, await deep('/admin/users', depth)],
    ['user search by e-mail (prefix)', `/admin/users?email=${encodeURIComponent(state.user_email.slice(0, state.user_email.indexOf('@') - 2))}`],
    ['user search by e-mail (whole address)', `/admin/users?email=${encodeURIComponent(state.user_email)}`],
    ['a user', `/admin/users/${state.user_id}`],
    ['API clients', '/admin/clients'],
    ['webhooks', '/admin/webhooks'],
    ['a webhook + delivery log', `/admin/webhooks/${state.webhook_id}`],
    [`its delivery log, page ${depth + 1} (Next links)`, await deep(`/admin/webhooks/${state.webhook_id}`, depth)],
    ['events', '/admin/events'],
    [`events, page ${depth + 1} (Next links)`, await deep('/admin/events', depth)],
    ['events, types=token.issued', '/admin/events?types=token.issued'],
    [`events, types=token.issued, page ${depth + 1}`, await deep('/admin/events?types=token.issued', depth)],
    ['events, user_id', `/admin/events?user_id=${state.user_id}`],
    ['events, organization_id', `/admin/events?organization_id=${org}`],
    [`events, organization_id, page ${depth + 1}`, await deep(`/admin/events?organization_id=${org}`, depth)],
    ['events, resource_id', `/admin/events?resource_id=${state.resource_id}`],
    ['events, client_id', `/admin/events?client_id=${state.client_id}`],
    ['events, start_time (last 7 days)', `/admin/events?start_time=${since}`],
    ['events, start_time + end_time (4 days)', `/admin/events?start_time=${since}&end_time=${until}`],
    ['events, types + organization_id', `/admin/events?types=token.issued&organization_id=${org}`],
  ];
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`\n${requests} GETs per page, one at a time; server time = the admin worker's duration_us; load average before: ${load}\n`);
  console.log('| page | bytes | server p50 ms | server p99 ms | client p50 ms |');
  console.log('|---|---:|---:|---:|---:|');
  const over = [];
  for (const [name, url] of pages) {
    const ids = [];
    const client = [];
    let bytes = 0;
    for (let i = 0; i < requests; i++) {
      const t = process.hrtime.bigint();
      const r = await get(url);
      client.push(Number(process.hrtime.bigint() - t) / 1e6);
      ids.push(r.headers.get('x-request-id'));
      bytes = r.html.length;
    }
    await sleep(100);
    const times = serverTimes(ids);
    const server = ids.map((id) => times.get(id)).filter((v) => v !== undefined).sort((a, b) => a - b);
    if (server.length !== ids.length) throw new Error(`${name}: ${ids.length - server.length} requests without a log line`);
    client.sort((a, b) => a - b);
    const p50 = quantile(server, 0.5);
    if (p50 >= 50) over.push(name);
    console.log(`| ${name} | ${bytes} | ${p50.toFixed(1)} | ${quantile(server, 0.99).toFixed(1)} | ${quantile(client, 0.5).toFixed(1)} |`);
  }
  console.log(`\nload average after: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  console.log(over.length ? `pages at or over 50 ms (p50): ${over.join('; ')}` : 'every page under 50 ms at p50');
}

if (process.argv[2] === 'seed') await seed();
else if (existsSync(stateFile)) await measure();
else throw new Error(`no ${stateFile}: seed first`);
