// bench/code-db's measurements: the mariadbd process's CPU per statement for the writes of a code
// flow, sent as a worker sends them. The environment comes from bench/code-db.
import { createHash, randomBytes } from 'node:crypto';
import mariadb from '../peer/node_modules/mariadb/promise.js';
import { ticks as cpuTicks, printResults } from './mariadbd-cpu.mjs';

const env = process.env;
const n = Number(env.BENCH_N);
const ticks = () => cpuTicks(env.BENCH_DB_PID);
const conn = await mariadb.createConnection({
  socketPath: env.BENCH_DB_SOCKET, user: env.BENCH_DB_USER, password: env.BENCH_DB_PASSWORD,
});
const sha = (s) => createHash('sha256').update(s).digest();
const data = '{"grant_id":"grt_bench","grant_type":"authorization_code","jti":"grt_bench.0123456789abcdefghijkl","scope":"bench:read","token_type":"Bearer"}';
let serial = Date.now() * 1000;
const id = (prefix) => `${prefix}${(serial++).toString(36).padStart(26, '0')}`;
// The codes the claiming step redeems, inserted by the step before it.
const codes = { code_db: [] };
const insertCode = (db) => () => {
  const code = randomBytes(32).toString('base64url');
  codes[db].push(code);
  return conn.execute(`INSERT INTO ${db}.authorization_codes (code_hash, login_request_id, client_id, ` +
    'resource_id, redirect_uri, code_challenge, scope, user_id, auth_time, organization_id, nonce, expires_at, ' +
    'dpop_jkt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
    sha(code), '', 'dcr_bench', 'res_bench', 'http://127.0.0.1:3000/callback', 'c'.repeat(43), 'bench:read',
    'usr_bench', 1800000000, null, null, 1800000060, null]);
};
// The grant's ten values, the event's ten, the refresh token's five (lib/tokens/grants.cc).
const grantEventToken = () => {
  const grant = id('grt_');
  const event = id('evt_');
  return [grant, 'usr_bench', 'dcr_bench', 'res_bench', 'bench:read', 1800000000, null, new Date(), 1900000000, null,
    event, 'token.issued', new Date(), null, 'usr_bench', 'res_bench', 'dcr_bench', '127.0.0.1', null, data,
    sha(event), grant, null, new Date(), 1800086400];
};
const redeem = (db) => () => conn.execute(`CALL ${db}.portcullis_redeem_code(${'?, '.repeat(26)}?)`,
  [sha(codes[db].shift()), 1800000001, ...grantEventToken()]);
const create = () => conn.execute(`CALL code_db.portcullis_create_code_grant(${'?, '.repeat(24)}?)`,
  grantEventToken());
const steps = [
  ['round trip: DO 1', () => conn.execute('DO 1')],
  ['the authorize\'s INSERT of a stored code (before: sql/0091)', insertCode('code_db')],
  ['the exchange: CALL portcullis_redeem_code, its claim and a nested CALL (before: sql/0091)', redeem('code_db')],
  ['the exchange: CALL portcullis_create_code_grant, a sealed code\'s (sql/0093)', create],
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
