// bench/code-db's measurements: the mariadbd process's CPU per statement of a code exchange's
// round trips, sent as a worker sends them. The environment comes from bench/code-db.
import mariadb from '../peer/node_modules/mariadb/promise.js';
import { ticks as cpuTicks, printResults } from './mariadbd-cpu.mjs';

const env = process.env;
const n = Number(env.BENCH_N);
const ticks = () => cpuTicks(env.BENCH_DB_PID);
const conn = await mariadb.createConnection({
  socketPath: env.BENCH_DB_SOCKET, user: env.BENCH_DB_USER, password: env.BENCH_DB_PASSWORD,
  checkDuplicate: false, // the read's row has several `id` columns, as the worker reads it
});
// The owners every exchange names: the copies' first active user, resource and client.
const first = async (sql) => {
  const rows = await conn.query(sql);
  if (!rows.length) throw new Error(`nothing from ${sql}: run bench/compare with BENCH_KEEP=1 first`);
  return rows[0].id;
};
const user = await first('SELECT id FROM code_db.users WHERE active ORDER BY id LIMIT 1');
const resource = await first('SELECT id FROM code_db.resources ORDER BY id LIMIT 1');
const client = await first('SELECT id FROM code_db.oauth_clients ORDER BY id LIMIT 1');
const data = '{"grant_id":"grt_bench","grant_type":"authorization_code","jti":"grt_bench.0123456789abcdefghijkl","scope":"bench:read","token_type":"Bearer"}';
let serial = Date.now() * 1000;
const id = (prefix) => `${prefix}${(serial++).toString(36).padStart(26, '0')}`;
// The grant's ten values and the event's ten (lib/tokens/grants.cc, grant_row; event_row).
const grantAndEvent = () => {
  const event = id('evt_');
  return [id('grt_'), user, client, resource, 'bench:read', 1800000000, null, new Date(), 1900000000, null,
    event, 'token.issued', new Date(), null, user, resource, client, '127.0.0.1', null, data];
};
// The read of ClientStore::find_with_code_state (lib/clients/clients.cc, tokens/codes.h), for a
// code whose grant does not exist yet (a fresh id each time, as every code names a new grant).
const read = () => conn.execute(
  'SELECT cl.*, g.id, u.active, r.id, r.server_url, r.access_token_ttl_seconds, r.access_token_signing_alg ' +
  'FROM (SELECT id, resource_id, kind, metadata, client_id_issued_at, create_time, last_used_time, secret_hash ' +
  'FROM code_db.oauth_clients WHERE id = ?) cl LEFT JOIN code_db.grants g ON g.id = ? ' +
  'LEFT JOIN code_db.users u ON u.id = ? LEFT JOIN code_db.resources r ON r.id = ?',
  [client, id('grt_'), user, resource]);
const afterRead = () => conn.execute(`CALL code_db.portcullis_create_code_grant(${'?, '.repeat(24)}?)`,
  [...grantAndEvent(), null, null, null, null, null]);
const alone = () => conn.execute(`CALL code_db.portcullis_exchange_code(${'?, '.repeat(19)}?)`, grantAndEvent());
const steps = [
  ['round trip: DO 1', () => conn.execute('DO 1')],
  ['before (sessions 14–15), the read: the client with the code\'s grant, user and resource', read],
  ['before, the write: CALL portcullis_create_code_grant (sql/0093)', afterRead],
  ['one statement: CALL portcullis_exchange_code (sql/0096), the INSERT checking user, client and resource', alone],
];
const results = new Map();
const note = (label, us) => { if (!results.has(label)) results.set(label, []); results.get(label).push(us); };
const rounds = Number(env.BENCH_ROUNDS ?? 3);
for (let round = 0; round < rounds; round++) {
  for (const [label, step] of steps) {
    await step(); // prepared once, outside the count
    const t0 = ticks();
    for (let i = 0; i < n; i++) await step();
    note(label, ((ticks() - t0) * 1e4) / n);
  }
}
await conn.end();
printResults(results, rounds);
