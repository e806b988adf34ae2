// SCIM records follow the management API's deletions (docs/scim.md §5), SCIM events carry
// what the event-type registry declares, and sorted or filtered lists walked in pages
// (docs/scim.md §7).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sleep, dbQuery } from './harness.mjs';
import { api, unique } from './management.mjs';
import { tenant, scim, patch, USER, GROUP } from './scim.mjs';

async function createUser(token, extra = {}) {
  const userName = `u-${unique()}@example.net`;
  const r = await scim(token, 'POST', '/Users', {
    json: { schemas: [USER], userName, emails: [{ value: userName, type: 'work', primary: true }], ...extra },
  });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

const memberIds = async (token, groupId) => {
  const r = await scim(token, 'GET', `/Groups/${groupId}`);
  assert.equal(r.status, 200, r.text);
  return (r.json.members ?? []).map((m) => m.value).sort();
};

test('deleting an environment user through the management API removes its SCIM records', async () => {
  const a = await tenant();
  const b = await tenant();
  const gone = await createUser(a.token);
  const kept = await createUser(a.token);
  const other = await createUser(b.token);
  const g = await scim(a.token, 'POST', '/Groups', {
    json: { schemas: [GROUP], displayName: `G ${unique()}`, members: [{ value: gone.id }, { value: kept.id }] },
  });
  assert.equal(g.status, 201, g.text);
  const etag = g.headers.get('etag');
  assert.equal((await scim(a.token, 'GET', '/Users')).json.totalResults, 2);

  assert.equal((await api('DELETE', `/api/v1/users/${gone.id}`)).status, 204);

  assert.equal((await scim(a.token, 'GET', `/Users/${gone.id}`)).status, 404);
  const list = await scim(a.token, 'GET', '/Users');
  assert.equal(list.json.totalResults, 1);
  assert.deepEqual(list.json.Resources.map((u) => u.id), [kept.id]);
  assert.deepEqual(await memberIds(a.token, g.json.id), [kept.id]);
  const after = await scim(a.token, 'GET', `/Groups/${g.json.id}`);
  assert.notEqual(after.headers.get('etag'), etag, 'the group changed, so its version moved');
  // The filtered count and the userName are free again.
  const filtered = await scim(a.token, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${gone.userName}"`)}`);
  assert.equal(filtered.json.totalResults, 0);
  const again = await scim(a.token, 'POST', '/Users', { json: { schemas: [USER], userName: gone.userName } });
  assert.equal(again.status, 201, again.text);
  assert.equal((await scim(a.token, 'GET', '/Users')).json.totalResults, 2);
  // Another organization's directory is untouched.
  assert.equal((await scim(b.token, 'GET', `/Users/${other.id}`)).status, 200);
  assert.equal((await scim(b.token, 'GET', '/Users')).json.totalResults, 1);
});

test('a user linked into two organizations keeps only the surviving organization\'s record', async () => {
  const a = await tenant();
  const b = await tenant();
  const domain = `${unique()}.example.com`;
  const claimed = await api('POST', `/api/v1/organizations/${b.org.id}/domains`, { json: { domain } });
  assert.equal(claimed.status, 201, claimed.text);
  const verified = await api('POST', `/api/v1/organizations/${b.org.id}/domains/${claimed.json.id}/verify`, { json: { method: 'admin' } });
  assert.equal(verified.status, 200, verified.text);
  // A's directory creates the environment user; B links to it through its verified domain.
  const email = `lin@${domain}`;
  const inA = await createUser(a.token, { emails: [{ value: email, type: 'work', primary: true }] });
  const inB = await scim(b.token, 'POST', '/Users', {
    json: { schemas: [USER], userName: `lin-${unique()}`, emails: [{ value: email, type: 'work', primary: true }] },
  });
  assert.equal(inB.status, 201, inB.text);
  assert.equal(inB.json.id, inA.id, 'linked');
  const g = await scim(b.token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `G ${unique()}`, members: [{ value: inA.id }] } });
  assert.equal(g.status, 201, g.text);

  // Organization B is deleted: its directory stops answering, and its record of the user is
  // gone — so when A's directory deletes the user it created, nothing else vouches for it and
  // the environment user goes too (docs/scim.md §5).
  assert.equal((await api('DELETE', `/api/v1/organizations/${b.org.id}`)).status, 204);
  assert.equal((await scim(b.token, 'GET', `/Users/${inA.id}`)).status, 401);
  const me = await api('GET', `/api/v1/users/${inA.id}`);
  assert.equal(me.status, 200, me.text);
  assert.deepEqual(me.json.memberships.map((m) => m.organization_id), [a.org.id]);
  assert.deepEqual(me.json.memberships[0].groups ?? [], []);
  assert.equal((await scim(a.token, 'DELETE', `/Users/${inA.id}`)).status, 204);
  assert.equal((await api('GET', `/api/v1/users/${inA.id}`)).status, 404);
  assert.equal((await scim(a.token, 'GET', '/Users')).json.totalResults, 0);
});

test('removing a SCIM user from the organization through the management API removes its SCIM record there', async () => {
  const a = await tenant();
  const b = await tenant();
  const domain = `${unique()}.example.com`;
  const claimed = await api('POST', `/api/v1/organizations/${b.org.id}/domains`, { json: { domain } });
  assert.equal(claimed.status, 201, claimed.text);
  assert.equal((await api('POST', `/api/v1/organizations/${b.org.id}/domains/${claimed.json.id}/verify`, { json: { method: 'admin' } })).status, 200);
  // One environment user in both directories (B links through its verified domain), and a
  // user of A's who stays.
  const email = `mem-${unique()}@${domain}`;
  const gone = await createUser(a.token, { emails: [{ value: email, type: 'work', primary: true }] });
  const inB = await scim(b.token, 'POST', '/Users', {
    json: { schemas: [USER], userName: `mem-${unique()}`, emails: [{ value: email, type: 'work', primary: true }] },
  });
  assert.equal(inB.status, 201, inB.text);
  assert.equal(inB.json.id, gone.id, 'linked');
  const kept = await createUser(a.token);
  const g = await scim(a.token, 'POST', '/Groups', {
    json: { schemas: [GROUP], displayName: `G ${unique()}`, members: [{ value: gone.id }, { value: kept.id }] },
  });
  assert.equal(g.status, 201, g.text);
  const etag = g.headers.get('etag');

  assert.equal((await api('DELETE', `/api/v1/organizations/${a.org.id}/users/${gone.id}`)).status, 204);

  // A's directory no longer knows the user: not found, not listed, not counted, out of its
  // group (whose version moved), and the userName is free.
  assert.equal((await scim(a.token, 'GET', `/Users/${gone.id}`)).status, 404);
  const list = await scim(a.token, 'GET', '/Users');
  assert.equal(list.json.totalResults, 1);
  assert.deepEqual(list.json.Resources.map((u) => u.id), [kept.id]);
  assert.deepEqual(await memberIds(a.token, g.json.id), [kept.id]);
  assert.notEqual((await scim(a.token, 'GET', `/Groups/${g.json.id}`)).headers.get('etag'), etag);
  const filtered = await scim(a.token, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${gone.userName}"`)}`);
  assert.equal(filtered.json.totalResults, 0);
  // The environment user and B's record of it stay: only A's membership went.
  const me = await api('GET', `/api/v1/users/${gone.id}`);
  assert.equal(me.status, 200, me.text);
  assert.deepEqual(me.json.memberships.map((m) => m.organization_id), [b.org.id]);
  assert.equal((await scim(b.token, 'GET', `/Users/${gone.id}`)).status, 200);
  assert.equal((await scim(b.token, 'GET', '/Users')).json.totalResults, 1);
  // A's directory can provision the address again.
  const again = await scim(a.token, 'POST', '/Users', { json: { schemas: [USER], userName: gone.userName } });
  assert.equal(again.status, 201, again.text);
});

test('deleting an organization removes its SCIM users, groups and directories', async () => {
  const a = await tenant();
  const u = await createUser(a.token);
  const g = await scim(a.token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName: `G ${unique()}`, members: [{ value: u.id }] } });
  assert.equal(g.status, 201, g.text);
  assert.equal((await api('DELETE', `/api/v1/organizations/${a.org.id}`)).status, 204);
  assert.equal((await scim(a.token, 'GET', `/Users/${u.id}`)).status, 401);
  // The environment user stays, with no membership and no group of the deleted organization.
  const me = await api('GET', `/api/v1/users/${u.id}`);
  assert.equal(me.status, 200, me.text);
  assert.deepEqual(me.json.memberships, []);
  const dirs = await api('GET', `/api/v1/organizations/${a.org.id}/directories`);
  assert.equal(dirs.status, 404);
});

// The organization's SCIM events through GET /api/v1/events, oldest first, once `n` are there.
async function scimEvents(orgId, n) {
  let last;
  for (let i = 0; i < 40; i++) {
    last = await api('GET', `/api/v1/events?organization_id=${orgId}&types=${[
      'scim.user.created', 'scim.user.updated', 'scim.user.deactivated', 'scim.user.deleted',
      'scim.group.created', 'scim.group.updated', 'scim.group.deleted'].join(',')}&page_size=100`);
    assert.equal(last.status, 200, last.text);
    if (last.json.events.length >= n) return last.json.events.reverse();
    await sleep(150);
  }
  assert.fail(`fewer than ${n} SCIM events: ${last.text.slice(0, 800)}`);
}

test('SCIM events carry the fields the event-type registry declares, and no secrets', async () => {
  const { org, directory, token } = await tenant();
  const userName = `Ev-${unique()}@Example.net`;
  const created = await scim(token, 'POST', '/Users', {
    json: { schemas: [USER], userName, password: 'hunter2-Secret', name: { givenName: 'Eve' }, emails: [{ value: userName, type: 'work' }] },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.json.id;
  const renamed = await scim(token, 'PATCH', `/Users/${id}`, { json: patch({ op: 'replace', path: 'name.givenName', value: 'Evelyn' }, { op: 'add', path: 'title', value: 'Engineer' }) });
  assert.equal(renamed.status, 200, renamed.text);
  const off = await scim(token, 'PATCH', `/Users/${id}`, { json: patch({ op: 'replace', path: 'active', value: false }) });
  assert.equal(off.status, 200, off.text);
  const displayName = `Team ${unique()}`;
  const g = await scim(token, 'POST', '/Groups', { json: { schemas: [GROUP], displayName } });
  assert.equal(g.status, 201, g.text);
  const added = await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'add', path: 'members', value: [{ value: id }] }) });
  assert.equal(added.status, 204, added.text);
  const renamedGroup = await scim(token, 'PATCH', `/Groups/${g.json.id}`, { json: patch({ op: 'replace', path: 'displayName', value: `${displayName} 2` }) });
  assert.equal(renamedGroup.status, 204, renamedGroup.text);
  assert.equal((await scim(token, 'DELETE', `/Groups/${g.json.id}`)).status, 204);
  assert.equal((await scim(token, 'DELETE', `/Users/${id}`)).status, 204);

  const events = await scimEvents(org.id, 8);
  const seen = events.map((e) => [e.type, e.user_id ?? null, e.data]);
  const dir = directory.id;
  const by = events[0].data.by;
  assert.ok(by, 'by names the directory caller');
  assert.deepEqual(seen, [
    ['scim.user.created', id, { directory_id: dir, user_name: userName, by }],
    ['scim.user.updated', id, { directory_id: dir, user_name: userName, fields: ['name', 'title'], by }],
    ['scim.user.deactivated', id, { directory_id: dir, user_name: userName, by }],
    ['scim.group.created', null, { directory_id: dir, group_id: g.json.id, display_name: displayName, by }],
    ['scim.group.updated', null, { directory_id: dir, group_id: g.json.id, display_name: displayName, fields: ['members'], by }],
    ['scim.group.updated', null, { directory_id: dir, group_id: g.json.id, display_name: `${displayName} 2`, fields: ['displayName'], by }],
    ['scim.group.deleted', null, { directory_id: dir, group_id: g.json.id, display_name: `${displayName} 2`, by }],
    ['scim.user.deleted', id, { directory_id: dir, user_name: userName, by }],
  ]);
  for (const e of events) {
    assert.equal(e.organization_id, org.id);
    assert.doesNotMatch(JSON.stringify(e), /hunter2|scim_[A-Za-z0-9_-]{20}/, 'no password, no token');
  }
});

test('a cold jump starts from the checkpoints (every PORTCULLIS_SCIM_CHECKPOINT_EVERY users), which follow creates and deletes', async () => {
  // scripts/test sets PORTCULLIS_SCIM_CHECKPOINT_EVERY=10.
  const every = Number(process.env.PORTCULLIS_SCIM_CHECKPOINT_EVERY);
  assert.equal(every, 10, 'the test stack checkpoints every 10 users');
  const { org, token } = await tenant();
  for (let i = 0; i < 4; i++) await Promise.all(Array.from({ length: 10 }, () => createUser(token)));
  const all = async () => (await scim(token, 'GET', '/Users?count=200')).json.Resources.map((u) => u.id);
  const page = async (start, count) => {
    const r = await scim(token, 'GET', `/Users?startIndex=${start}&count=${count}`);
    assert.equal(r.status, 200, r.text);
    return r.json;
  };
  const checkpoints = () => dbQuery(`SELECT position, row_id FROM scim_list_checkpoints WHERE organization_id = '${org.id}' ORDER BY position`);
  let expected = await all();
  assert.equal(expected.length, 40);
  // The background process (portcullis-webhooks) makes the checkpoints of a directory as it
  // grows, up to two intervals before its end: at 10, 20 and 30 of 40 users.
  const made = [['10', expected[9]], ['20', expected[19]], ['30', expected[29]]];
  for (let i = 0; i < 100 && JSON.stringify(checkpoints()) !== JSON.stringify(made); i++) await sleep(100);
  assert.deepEqual(checkpoints(), made);
  const jump = await page(34, 5);
  assert.equal(jump.totalResults, 40);
  assert.deepEqual(jump.Resources.map((u) => u.id), expected.slice(33, 38));
  assert.deepEqual(checkpoints(), made);
  // Deleting a user before them (one of them included) and creating one moves them; every jump
  // still lands where a fresh count of the list would.
  assert.equal((await scim(token, 'DELETE', `/Users/${expected[2]}`)).status, 204);
  assert.equal((await scim(token, 'DELETE', `/Users/${expected[19]}`)).status, 204);
  await createUser(token);
  expected = await all();
  assert.equal(expected.length, 39);
  assert.deepEqual(checkpoints(), [['9', expected[8]], ['28', expected[27]]]);
  // (Not 39: the page after the first jump's would go on after that page's last row.)
  for (const start of [37, 31, 22, 12, 9, 1]) {
    const p = await page(start, 4);
    assert.equal(p.totalResults, 39);
    assert.deepEqual(p.Resources.map((u) => u.id), expected.slice(start - 1, start + 3), `startIndex=${start}`);
  }
  assert.equal((await page(40, 4)).Resources.length, 0);

  // A create that sorts before the checkpoints (written by a node whose clock is behind the
  // one that wrote the rows listed last: here the last users are moved an hour ahead) moves
  // them too.
  dbQuery(`UPDATE scim_users SET create_time = create_time + INTERVAL 1 HOUR WHERE organization_id = '${org.id}' AND user_id IN (${expected.slice(20).map((id) => `'${id}'`).join(',')})`);
  // (Moving rows by hand leaves the list's checkpoints and marks pointing at old places: start
  // them afresh.)
  dbQuery(`DELETE FROM scim_list_checkpoints WHERE organization_id = '${org.id}'`);
  dbQuery(`DELETE FROM scim_list_marks WHERE organization_id = '${org.id}'`);
  expected = await all();
  assert.equal(expected.length, 39);
  // A jump writes the checkpoints it passes that are not made yet: 30 here, the interval before
  // the end that the background process leaves alone (10 and 20 are made by either).
  assert.equal((await page(34, 5)).Resources.length, 5);
  assert.deepEqual(checkpoints(), [['10', expected[9]], ['20', expected[19]], ['30', expected[29]]]);
  const early = await createUser(token);
  expected = await all();
  assert.equal(expected.length, 40);
  assert.equal(expected.indexOf(early.id), 20, 'listed before the users created "later"');
  assert.deepEqual(checkpoints(), [['10', expected[9]], ['20', expected[19]], ['31', expected[30]]]);
  for (const start of [38, 32, 30, 21, 11]) {
    const p = await page(start, 3);
    assert.equal(p.totalResults, 40);
    assert.deepEqual(p.Resources.map((u) => u.id), expected.slice(start - 1, start + 2), `startIndex=${start} after the early create`);
  }
});

// Walks `query` in pages of `count` (each page starting where the previous one ended, as Okta's
// import does), calling `between` after every page; returns the ids in the order served.
async function walk(token, query, count, between = async () => {}) {
  const ids = [];
  for (let start = 1; ; start += count) {
    const r = await scim(token, 'GET', `/Users?${query}&startIndex=${start}&count=${count}`);
    assert.equal(r.status, 200, r.text);
    ids.push(...r.json.Resources.map((u) => u.id));
    if (r.json.Resources.length < count) return ids;
    await between(start);
  }
}

test('a sorted, filtered list walked in pages gives every user exactly once while users are added and removed', async () => {
  const { org, token } = await tenant();
  const tag = unique();
  const make = (name, extra = {}) => createUser(token, { userName: `${name}-${tag}@example.net`, title: 'Engineer', ...extra });
  // 30 engineers with names in no particular order, some without a familyName (sorted as NULL),
  // and 6 others the filter leaves out.
  const names = Array.from({ length: 30 }, (_, i) => `m${String((i * 17) % 30).padStart(2, '0')}`);
  const engineers = [];
  for (const [i, n] of names.entries()) {
    engineers.push(await make(n, i % 4 === 0 ? {} : { name: { familyName: `F${(i * 7) % 30}` } }));
  }
  for (let i = 0; i < 6; i++) await make(`m${i}x`, { title: 'Sales' });
  const filter = encodeURIComponent('title eq "Engineer"');
  let added = 0;

  for (const [sortBy, sortOrder, before] of [
    ['userName', 'ascending', 'a'], ['userName', 'descending', 'z'],
    ['name.familyName', 'ascending', ''], ['name.familyName', 'descending', ''],
  ]) {
    const query = `filter=${filter}&sortBy=${sortBy}&sortOrder=${sortOrder}`;
    // The order a fresh list gives, to compare the walk's order with.
    const fresh = (await scim(token, 'GET', `/Users?${query}&count=200`)).json.Resources.map((u) => u.id);
    assert.ok(fresh.length >= 30);
    const present = new Set(fresh);
    const removed = new Set();
    const ids = await walk(token, query, 4, async (start) => {
      // After each page: two engineers who sort before the walk's position (an offset would
      // serve a row twice), one who sorts after it, and a user the walk has not reached yet
      // (the fifth-next row) is deleted (an offset would skip a row).
      const family = sortOrder === 'ascending' ? 'A' : 'Z';
      for (let i = 0; i < 2; i++) {
        await make(`${before || 'n'}${unique()}`, { name: { familyName: `${family}${unique()}` } });
        added++;
      }
      await make(`${sortOrder === 'ascending' ? 'z' : 'a'}${unique()}`);
      added++;
      const victim = fresh[start + 8];
      if (victim && !removed.has(victim) && removed.size < 3) {
        assert.equal((await scim(token, 'DELETE', `/Users/${victim}`)).status, 204);
        removed.add(victim);
      }
    });
    assert.equal(new Set(ids).size, ids.length, `${sortBy} ${sortOrder}: no user served twice`);
    const missing = fresh.filter((id) => !removed.has(id) && !ids.includes(id));
    assert.deepEqual(missing, [], `${sortBy} ${sortOrder}: every user present at the start is served`);
    for (const id of removed) assert.ok(!ids.includes(id), 'a user deleted before the walk reached it is not served');
    // The users served that were there at the start come in the list's order.
    const served = ids.filter((id) => present.has(id));
    assert.deepEqual(served, fresh.filter((id) => served.includes(id)), `${sortBy} ${sortOrder}: in order`);
  }
  assert.ok(added >= 4 * 7 * 3, 'users were added after every full page');
  assert.ok(Number(dbQuery(`SELECT COUNT(*) FROM scim_list_marks WHERE organization_id = '${org.id}' AND sort_value IS NOT NULL`)[0][0]) > 0,
    'the sorted walks left marks with their sort values');
});
