// Faults are survived: a killed worker is replaced, a database restart under load costs only
// 503s while it is down, and nothing is half-written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { http, env, basic, managementToken, masterPid, childPids, runLocal, sleep } from './harness.mjs';

// Fires `fn` back to back on `concurrency` lanes until `stop()` is true; returns all results.
async function load(fn, stop, concurrency = 4) {
  const results = [];
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (!stop()) {
      try {
        results.push(await fn());
      } catch (e) {
        results.push({ status: 0, error: String(e) });
      }
    }
  }));
  return results;
}

test('a worker killed with SIGKILL is replaced within 2 s while requests keep being served', async () => {
  const probeToken = await managementToken();
  for (const family of ['wellknown', 'oauth']) {
    const master = masterPid(family);
    const before = childPids(master);
    assert.ok(before.length >= 1);
    let stop = false;
    // Introspection for the oauth pool: it reads the database on every call and, unlike the
    // token endpoint, has no per-client rate limit for the load to run into. /healthz for the
    // wellknown pool: every one reaches a worker (nginx answers /keys from its cache).
    const running = load(() => http(family === 'oauth' ? '/oauth/introspect' : '/healthz', family === 'oauth'
      ? { method: 'POST', form: { token: probeToken }, headers: { authorization: `Bearer ${probeToken}` } }
      : {}), () => stop);
    await sleep(300);
    const victim = before[0];
    const killedAt = Date.now();
    process.kill(victim, 'SIGKILL');
    let replaced = null;
    while (Date.now() - killedAt < 2000) {
      const now = childPids(master);
      if (!now.includes(victim) && now.length === before.length) {
        replaced = Date.now() - killedAt;
        break;
      }
      await sleep(20);
    }
    await sleep(500);
    stop = true;
    const results = await running;
    assert.ok(replaced !== null, `${family}: the master replaced the worker within 2 s`);
    const ok = results.filter((r) => r.status === 200).length;
    const failed = results.filter((r) => r.status !== 200);
    // Only a request the victim held when it died can fail (nginx answers 502 for it).
    assert.ok(failed.length <= 1, `${family}: ${failed.length} failures: ${JSON.stringify(failed.slice(0, 3))}`);
    assert.ok(ok > 20, `${family}: served ${ok} requests`);
    assert.equal(masterPid(family), master);
  }
});

test('a MariaDB restart under load: 503 with Retry-After while down, then recovery; no partial writes', async () => {
  const token = await managementToken();
  const auth = { authorization: `Bearer ${token}` };
  let stop = false;
  const created = [];
  const tokenLoad = load(() => http('/oauth/introspect', { method: 'POST', form: { token }, headers: auth }), () => stop, 3);
  let n = 0;
  const writeLoad = load(async () => {
    const r = await http('/api/v1/clients', { method: 'POST', headers: auth, json: { name: `restart-${n++}`, scopes: ['users:read'] } });
    if (r.status === 201) created.push(r.json);
    return r;
  }, () => stop, 1);

  await sleep(500);
  runLocal('db-stop');
  await sleep(1500);
  runLocal('db-start');
  // Service resumes by itself: wait for the first success after the restart.
  const restartedAt = Date.now();
  let recovered = false;
  while (Date.now() - restartedAt < 15000) {
    if ((await http('/readyz')).status === 200) {
      recovered = true;
      break;
    }
    await sleep(100);
  }
  await sleep(1000);
  stop = true;
  const results = [...(await tokenLoad), ...(await writeLoad)];
  assert.ok(recovered, 'ready again after the restart');

  const statuses = {};
  for (const r of results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  for (const r of results) {
    assert.ok([200, 201, 503].includes(r.status), `unexpected ${r.status}: ${r.text ?? r.error}`);
    if (r.status === 503) {
      assert.ok(r.headers.get('retry-after'), 'a 503 carries Retry-After');
      assert.ok(r.json, '503 in the family JSON shape');
    }
  }
  assert.ok(statuses[503] > 0, `the outage was seen: ${JSON.stringify(statuses)}`);
  // Requests succeed again after recovery.
  assert.equal((await http('/oauth/token', { method: 'POST', form: { grant_type: 'client_credentials' }, headers: { authorization: basic(env.PORTCULLIS_CLIENT_ID, env.PORTCULLIS_CLIENT_SECRET) } })).status, 200);
  // Every client the API said it created exists whole and works.
  const fresh = { authorization: `Bearer ${await managementToken()}` };
  for (const c of created) {
    const got = await http(`/api/v1/clients/${c.client_id}`, { headers: fresh });
    assert.equal(got.status, 200, `client ${c.client_id} answered 201 and must exist`);
    assert.equal(got.json.name, c.name);
    assert.deepEqual(got.json.scopes, ['users:read']);
    await managementToken(c.client_id, c.client_secret);
  }
});
