// bench/refresh-db's measurements: the mariadbd process's CPU per statement, for the statements of
// a refresh sent as a worker sends them and for the INSERTs of its CALL run inside the server.
// The environment comes from bench/refresh-db.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import mariadb from '../peer/node_modules/mariadb/promise.js';
import { ticks as cpuTicks, printResults, timeSteps } from './mariadbd-cpu.mjs';

const env = process.env;
const n = Number(env.BENCH_N);
const ticks = () => cpuTicks(env.BENCH_DB_PID);
const conn = await mariadb.createConnection({
  socketPath: env.BENCH_DB_SOCKET, user: env.BENCH_DB_USER, password: env.BENCH_DB_PASSWORD, database: env.BENCH_DB_NAME,
});
// The refresh's read, as lib/tokens/grants.cc (find_refresh_token) sends it, of a rotated token.
const read = 'SELECT g.id, g.user_id, g.client_id, g.resource_id, g.scope, g.auth_time, g.organization_id, ' +
  'g.absolute_expires_at, g.revoked_at, g.dpop_jkt, t.expires_at, t.rotated_at IS NOT NULL OR EXISTS (SELECT 1 FROM ' +
  'refresh_tokens c WHERE c.parent_hash = t.token_hash), u.active, r.id AS resource, r.server_url, ' +
  'r.access_token_ttl_seconds, r.access_token_signing_alg FROM refresh_tokens t JOIN grants g ON g.id = t.grant_id ' +
  'LEFT JOIN users u ON u.id = g.user_id LEFT JOIN resources r ON r.id = g.resource_id WHERE t.token_hash = ?';
// None on a stack whose refreshes are all sealed: the stored token's steps are skipped then.
const [rotated] = await conn.query('SELECT parent_hash FROM refresh_tokens WHERE parent_hash IS NOT NULL LIMIT 1');
const data = '{"grant_id":"grt_bench","grant_type":"refresh_token","jti":"grt_bench.0123456789abcdefghijkl","scope":"bench:read","token_type":"Bearer"}';
let serial = Date.now() * 1000;
const sha = (s) => createHash('sha256').update(s).digest();
const call = (db) => () => {
  const id = `evt_${(serial++).toString(36).padStart(26, '0')}`;
  return conn.execute(`CALL ${db}.portcullis_record_event(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
    id, 'token.refreshed', new Date(), null, 'usr_bench', 'res_bench', 'dcr_bench', '127.0.0.1', null, data,
    sha(id), 'grt_bench', sha(`p${id}`), new Date(), 1800000000,
  ]);
};
// A sealed refresh token's read (lib/tokens/grants.cc, find_refresh_token) and its refresh's one
// statement (sql/0094), on one live grant of the scratch copy of grants (its user in the scratch
// copy of users, its resource the stack's), whose generation moves by one each rotation.
const grantRead = 'SELECT g.id, g.user_id, g.client_id, g.resource_id, g.scope, g.auth_time, g.organization_id, ' +
  'g.absolute_expires_at, g.revoked_at, g.dpop_jkt, g.refresh_generation, u.active, r.id AS resource, r.server_url, ' +
  'r.access_token_ttl_seconds, r.access_token_signing_alg FROM refresh_db_scratch.grants g LEFT JOIN users u ON u.id = g.user_id ' +
  'LEFT JOIN resources r ON r.id = g.resource_id WHERE g.id = ?';
const [live] = await conn.query('SELECT id, refresh_generation FROM refresh_db_scratch.grants WHERE revoked_at IS NULL AND absolute_expires_at > UNIX_TIMESTAMP() ' +
  'AND id > (SELECT MIN(id) FROM refresh_db_scratch.grants) ORDER BY id DESC LIMIT 1');
if (!live) throw new Error('fewer than two grants in the database: run a refresh first (bench/compare)');
let generation = Number(live.refresh_generation);
const rotate = () => {
  const id = `evt_${(serial++).toString(36).padStart(26, '0')}`;
  return conn.execute(`CALL refresh_db_scratch.portcullis_rotate_grant(${'?, '.repeat(12)}?)`, [
    live.id, generation++, Math.floor(Date.now() / 1000), id, 'token.refreshed', new Date(), null, 'usr_bench', 'res_bench', 'dcr_bench', '127.0.0.1',
    null, data,
  ]);
};
const clientSteps = [
  ['round trip: DO 1', () => conn.execute('DO 1')],
  ...(rotated ? [
    ['the refresh read (SELECT)', () => conn.execute(read, [rotated.parent_hash])],
    ['the refresh write (CALL), events with its indexes', call('refresh_db_scratch')],
    ['the refresh write (CALL), events without secondary indexes', call('refresh_db_noidx')],
  ] : []),
  ['sealed: the read of the grant by primary key (SELECT), only when the rotation matched nothing', () => conn.execute(grantRead, [live.id])],
  ['sealed: the refresh\'s one statement (CALL portcullis_rotate_grant)', rotate],
];
const serverSteps = [
  ['in the server: the loop alone', 'refresh_db_scratch', 'none'],
  ['in the server: the token INSERT', 'refresh_db_scratch', 'token'],
  ['in the server: the event INSERT, with its indexes', 'refresh_db_scratch', 'event'],
  ['in the server: the event INSERT, no secondary index', 'refresh_db_noidx', 'event'],
  ['in the server: the outbox mark INSERT', 'refresh_db_scratch', 'mark'],
  ['in the server: a grant\'s generation UPDATE (sealed)', 'refresh_db_scratch', 'generation'],
];
const results = new Map();
const note = (label, us) => { if (!results.has(label)) results.set(label, []); results.get(label).push(us); };
let base = 1e9;
const rounds = Number(env.BENCH_ROUNDS ?? 3);
// The scratch tables' first pages are allocated outside the count.
for (const [, step] of clientSteps.slice(2)) for (let i = 0; i < n / 4; i++) await step();
for (let round = 0; round < rounds; round++) {
  await timeSteps(env.BENCH_DB_PID, clientSteps, n, note);
  for (const [label, db, what] of serverSteps) {
    const t0 = ticks();
    execFileSync('mariadb', [`--defaults-file=${env.BENCH_DB_CNF}`, `-u${env.BENCH_DB_ADMIN}`, db, '-e', `CALL insert_loop(${n}, ${base}, '${what}')`]);
    base += n;
    note(label, ((ticks() - t0) * 1e4) / n);
  }
}
await conn.end();
printResults(results, rounds);
