// bench/refresh-db --parts: the sealed refresh's one statement (CALL portcullis_rotate_grant,
// sql/0094) taken apart, as the mariadbd process's CPU per statement. The environment comes from
// bench/refresh-db, which made the scratch databases and procedures named here.
import { execFileSync, spawn } from 'node:child_process';
import mariadb from '../peer/node_modules/mariadb/promise.js';
import { ticks as cpuTicks, printResults, timeSteps } from './mariadbd-cpu.mjs';

const env = process.env;
const n = Number(env.BENCH_N);
const ticks = () => cpuTicks(env.BENCH_DB_PID);
const conn = await mariadb.createConnection({
  socketPath: env.BENCH_DB_SOCKET, user: env.BENCH_DB_USER, password: env.BENCH_DB_PASSWORD, database: env.BENCH_DB_NAME,
});
const data = '{"grant_id":"grt_bench","grant_type":"refresh_token","jti":"grt_bench.0123456789abcdefghijkl","scope":"bench:read","token_type":"Bearer"}';
let serial = Date.now() * 1000;
const nextId = () => `evt_${(serial++).toString(36).padStart(26, '0')}`;

// One live grant per scratch database (each has its own copy of grants), its generation moving
// by one each rotation, as a chain of refreshes moves it.
const grants = {};
for (const db of ['refresh_db_scratch', 'refresh_db_noidx', 'refresh_db_nojson']) {
  const [live] = await conn.query(`SELECT id, refresh_generation FROM ${db}.grants WHERE revoked_at IS NULL AND absolute_expires_at > UNIX_TIMESTAMP() ` +
    `AND id > (SELECT MIN(id) FROM ${db}.grants) ORDER BY id DESC LIMIT 1`);
  if (!live) throw new Error('fewer than two grants in the database: run a refresh first (bench/compare)');
  grants[db] = { id: live.id, generation: Number(live.refresh_generation) };
}
// `moves`: the procedure moves the grant's generation (the ones that do nothing leave it).
const callArgs = (db, moves) => {
  const g = grants[db];
  return [g.id, moves ? g.generation++ : g.generation, Math.floor(Date.now() / 1000), nextId(), 'token.refreshed', new Date(), null, 'usr_bench',
    'res_bench', 'dcr_bench', '127.0.0.1', null, data];
};
const call = (db, proc, moves = true) => () => conn.execute(`CALL ${db}.${proc}(${'?, '.repeat(12)}?)`, callArgs(db, moves));
const update = 'UPDATE refresh_db_scratch.grants g JOIN refresh_db_scratch.users u ON u.id = g.user_id SET g.refresh_generation = ? + 1 ' +
  'WHERE g.id = ? AND g.refresh_generation = ? AND g.revoked_at IS NULL AND g.absolute_expires_at > ? AND u.active';
const eventInsert = (table) => `INSERT INTO ${table} (id, type, occurred_at, organization_id, user_id, resource_id, client_id, ip, ` +
  'user_agent, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
const markInsert = 'INSERT INTO refresh_db_scratch.event_outbox (event_id, type) VALUES (?, ?)';
const eventRow = (id) => [id, 'token.refreshed', new Date(), null, 'usr_bench', 'res_bench', 'dcr_bench', '127.0.0.1', null, data];
const doUpdate = () => {
  const g = grants.refresh_db_scratch;
  const gen = g.generation++;
  return conn.execute(update, [gen, g.id, gen, Math.floor(Date.now() / 1000)]);
};
// The CALL's statements sent one by one in a transaction of the client's: five round trips.
const byHand = async () => {
  await conn.query('START TRANSACTION');
  await doUpdate();
  const id = nextId();
  await conn.execute(eventInsert('refresh_db_scratch.events'), eventRow(id));
  await conn.execute(markInsert, [id, 'token.refreshed']);
  await conn.query('COMMIT');
};
const clientSteps = [
  ['a round trip: `DO 1`', () => conn.execute('DO 1')],
  ['**the refresh: `CALL portcullis_rotate_grant`**', call('refresh_db_scratch', 'portcullis_rotate_grant')],
  ['the same, `events` without its 9 secondary indexes', call('refresh_db_noidx', 'portcullis_rotate_grant')],
  ['the same, `events.data` LONGTEXT without the JSON check', call('refresh_db_nojson', 'portcullis_rotate_grant')],
  ['a CALL of a procedure with its 13 parameters that does nothing', call('refresh_db_scratch', 'bench_nothing', false)],
  ['a CALL that only declares the handler and opens and commits its transaction', call('refresh_db_scratch', 'bench_frame', false)],
  ['the CALL\'s statements without handler nor `@@in_transaction` (START TRANSACTION … COMMIT)', call('refresh_db_scratch', 'bench_bare')],
  ['the same statements sent by the client: 5 round trips (START, UPDATE, INSERT, INSERT, COMMIT)', byHand],
  ['the `UPDATE grants JOIN users` alone (autocommit)', doUpdate],
  ['the event\'s `INSERT` alone (autocommit)', () => conn.execute(eventInsert('refresh_db_scratch.events'), eventRow(nextId()))],
  ['the event\'s `INSERT` alone, no secondary index (autocommit)', () => conn.execute(eventInsert('refresh_db_noidx.events'), eventRow(nextId()))],
  ['the outbox mark\'s `INSERT` alone (autocommit)', () => conn.execute(markInsert, [nextId(), 'token.refreshed'])],
];
const tables = env.BENCH_EVENT_TABLES.split(' ');
const tableLabel = (table) => ({
  ev_none: 'no secondary index', ev_all: 'the 9 secondary indexes', ev_nojson: 'the 9 indexes, `data` without the JSON check',
})[table] ?? `only \`${table.slice(3)}\``;
const results = new Map();
const note = (label, us) => { if (!results.has(label)) results.set(label, []); results.get(label).push(us); };
let base = 2e9;
const rounds = Number(env.BENCH_ROUNDS ?? 3);
const loop = (table, count) => {
  execFileSync('mariadb', [`--defaults-file=${env.BENCH_DB_CNF}`, `-u${env.BENCH_DB_ADMIN}`, 'refresh_db_scratch', '-e', `CALL loop_${table}(${count}, ${base})`]);
  base += count;
};
// The scratch tables' first pages are allocated outside the count.
for (const [, step] of clientSteps.slice(1)) for (let i = 0; i < n / 4; i++) await step();
for (const table of tables) loop(table, n / 4);
for (let round = 0; round < rounds; round++) {
  await timeSteps(env.BENCH_DB_PID, clientSteps, n, note);
  // Four times as many: no round trip, so each is cheap; in a new order each round.
  for (const table of round % 2 ? [...tables].reverse() : tables) {
    const t0 = ticks();
    loop(table, 4 * n);
    note(`in the server, an event's INSERT (autocommit), ${tableLabel(table)}`, ((ticks() - t0) * 1e4) / (4 * n));
  }
}
printResults(results, rounds);

// Where the CALL's CPU goes inside mariadbd: `perf record -g` of the process while this connection
// sends only the CALL, each sample filed under the first category (in this order) whose function
// is on its stack. InnoDB's own functions have no symbols in Debian's mariadbd; they fall under
// the SQL layer's function that called them (ha_write_row under the INSERTs, and so on).
const categories = [
  ['the `UPDATE grants JOIN users`', ['mysql_multi_update', 'multi_update::']],
  ['the two `INSERT`s (event, mark)', ['mysql_insert']],
  ['`COMMIT`', ['trans_commit', 'ha_commit_trans']],
  ['SP variables written into each statement\'s text (for the logs)', ['append_for_log', 'append_value_for_log', 'subst_spvars']],
  ['the 13 parameters into the procedure\'s variables', ['sp_rcontext::create', 'rcontext_create', 'bind_input_param', 'sp_rcontext::set_variable', 'init_var_table']],
  ['the rest of the procedure (its other instructions, each statement\'s set-up and clean-up)', ['sp_head::execute']],
  ['the CALL itself (finding the procedure, access check, the prepared statement)', ['mysql_execute_command', 'mysqld_stmt_execute']],
  ['reading the request (waiting in poll, the socket read)', ['my_net_read', 'vio_read', 'do_command']],
];
const other = 'the rest: the answer\'s write and the client\'s wake-up, scheduling';
if (env.BENCH_PROFILE === '1') {
  const seconds = 10;
  const data = '/tmp/refresh-db-parts.perf';
  const perf = spawn('perf', ['record', '-F', '2000', '-g', '-p', env.BENCH_DB_PID, '-o', data], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  const step = call('refresh_db_scratch', 'portcullis_rotate_grant');
  const end = Date.now() + seconds * 1000;
  let calls = 0;
  const t0 = ticks();
  while (Date.now() < end) { await step(); calls++; }
  const us = ((ticks() - t0) * 1e4) / calls;
  perf.kill('SIGINT');
  await new Promise((r) => perf.on('close', r));
  const script = execFileSync('perf', ['script', '-i', data, '-F', 'ip,sym'], { maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  const counts = new Map([...categories.map(([name]) => [name, 0]), [other, 0]]);
  let total = 0;
  for (const sample of script.split('\n\n')) {
    if (!sample.trim()) continue;
    total++;
    const hit = categories.find(([, keys]) => keys.some((k) => sample.includes(k)));
    counts.set(hit ? hit[0] : other, counts.get(hit ? hit[0] : other) + 1);
  }
  console.log(`\nThe CALL under perf: ${calls} calls in ${seconds} s, ${us.toFixed(0)} µs of mariadbd CPU each, ${total} samples`);
  console.log('| part of the CALL | share of mariadbd\'s samples | µs a CALL |');
  console.log('|---|---:|---:|');
  for (const [name, c] of counts) console.log(`| ${name} | ${((100 * c) / total).toFixed(1)} % | ${((us * c) / total).toFixed(0)} |`);
}
await conn.end();
