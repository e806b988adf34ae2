// Organization domains (contract §7): claims, verification by a DNS TXT record served by a
// real DNS server (dnsmasq, dns-server.mjs) that the stack is configured to ask, verification
// by an administrator, the one-verified-owner rule, validation, scopes and events.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { assertProblem, assertNoNulls } from './harness.mjs';
import { api, unique, tokenWithScopes, createOrg, eventsOf } from './management.mjs';
import { dnsPort, configuredNameserver, startDnsmasq, startSilentServer } from './dns-server.mjs';

const DOMAIN_ID = /^dom_[0-9a-hjkmnp-tv-z]{26}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
// Every domain of this file lies under one zone of its own, which the test DNS server holds.
const zone = `dt-${unique()}.com`;
const newDomain = (label = 'd') => `${label}-${unique()}.${zone}`;

const createOrganization = async () => (await createOrg()).id;
const domainsPath = (org) => `/api/v1/organizations/${org}/domains`;

async function claim(org, domain) {
  const r = await api('POST', domainsPath(org), { json: { domain } });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

const verify = (org, dom, json, token) =>
  api('POST', `${domainsPath(org)}/${dom}/verify`, { json, token });

// The events of `type` about one domain, as [type, organization, domain, method].
async function events(type, org, domainId) {
  const all = await eventsOf(type, 'organization_id', org);
  return all.filter((e) => e.data.domain_id === domainId)
    .map((e) => [type, e.organization_id, e.data.domain, e.data.method ?? '']);
}

let orgA;
let orgB;
before(async () => {
  assert.ok(dnsPort, 'PORTCULLIS_TEST_DNS_PORT is set by scripts/test');
  assert.equal(configuredNameserver(), `127.0.0.1:${dnsPort}`);
  orgA = await createOrganization();
  orgB = await createOrganization();
});

test('a claim answers with the TXT record to publish, and is listed', async () => {
  const domain = newDomain();
  const r = await api('POST', domainsPath(orgA), { json: { domain: domain.toUpperCase() } });
  assert.equal(r.status, 201, r.text);
  assertNoNulls(assert, r.json);
  assert.match(r.json.id, DOMAIN_ID);
  assert.equal(r.headers.get('location').endsWith(`${domainsPath(orgA)}/${r.json.id}`), true);
  assert.equal(r.json.organization_id, orgA);
  assert.equal(r.json.domain, domain, 'stored in lowercase');
  assert.equal(r.json.status, 'pending');
  assert.equal(r.json.verified_by, undefined);
  assert.equal(r.json.verification_record.type, 'TXT');
  assert.equal(r.json.verification_record.name, `_portcullis-verification.${domain}`);
  assert.match(r.json.verification_record.value, /^portcullis-verification=[A-Za-z0-9_-]{32}$/);
  assert.match(r.json.create_time, RFC3339);

  const again = await api('POST', domainsPath(orgA), { json: { domain } });
  assertProblem(assert, again, 409, 'already_exists');

  const one = await api('GET', `${domainsPath(orgA)}/${r.json.id}`);
  assert.equal(one.status, 200);
  assert.deepEqual(one.json, r.json);

  const list = await api('GET', `${domainsPath(orgA)}?page_size=100`);
  assert.equal(list.status, 200, list.text);
  assert.ok(list.json.domains.some((d) => d.id === r.json.id));
  assert.equal(list.json.total_size, list.json.domains.length);
  assert.equal(list.json.next_page_token, '');
  assert.equal(list.json.prev_page_token, '');
  const other = await api('GET', domainsPath(orgB));
  assert.ok(!other.json.domains.some((d) => d.id === r.json.id), 'listed only under its organization');

  const created = await events('domain.created', orgA, r.json.id);
  assert.deepEqual(created, [['domain.created', orgA, domain, '']]);
});

test('bad domains and bad paths are 400, unknown ones 404', async () => {
  for (const domain of ['', 'com', 'localhost', 'example.com.', '192.0.2.1', '[2001:db8::1]', 'a..b.com',
    '-a.com', 'exa mple.com', 'b\u00fccher.ch', 'printer.local', `${'a'.repeat(64)}.com`,
    `${'a.'.repeat(115)}com`, 'user@example.com']) {
    const r = await api('POST', domainsPath(orgA), { json: { domain } });
    assertProblem(assert, r, 400, 'invalid_argument');
    assert.ok(r.json.detail.length > 0);
  }
  for (const json of [{}, { domain: 42 }, { domain: newDomain(), verified: true }, '[]', 'nope']) {
    const r = await api('POST', domainsPath(orgA), { json });
    assertProblem(assert, r, 400, 'invalid_argument');
  }
  for (const org of ['abc', `org_${'a'.repeat(29)}`, 'org_a.b', 'org_']) {
    assertProblem(assert, await api('GET', domainsPath(org)), 400, 'invalid_argument');
    assertProblem(assert, await api('POST', domainsPath(org), { json: { domain: newDomain() } }), 400, 'invalid_argument');
  }
  assertProblem(assert, await api('GET', domainsPath('org_doesnotexist')), 404, 'not_found');
  assertProblem(assert, await api('POST', domainsPath('org_doesnotexist'), { json: { domain: newDomain() } }), 404, 'not_found');
  assertProblem(assert, await api('GET', `${domainsPath(orgA)}/dom_01jd3k0000000000000000000a`), 404, 'not_found');
  assertProblem(assert, await api('GET', `${domainsPath(orgA)}/nonsense`), 404, 'not_found');
  assertProblem(assert, await verify(orgA, 'dom_01jd3k0000000000000000000a', {}), 404, 'not_found');
  assertProblem(assert, await api('DELETE', `${domainsPath(orgA)}/dom_01jd3k0000000000000000000a`), 404, 'not_found');
  const d = await claim(orgA, newDomain());
  assertProblem(assert, await api('GET', `${domainsPath(orgB)}/${d.id}`), 404, 'not_found');
  assertProblem(assert, await verify(orgA, d.id, { method: 'carrier-pigeon' }), 400, 'invalid_argument');
  assertProblem(assert, await verify(orgA, d.id, { method: 'admin', extra: 1 }), 400, 'invalid_argument');
  assertProblem(assert, await api('GET', `${domainsPath(orgA)}?page_size=0`), 400, 'invalid_argument');
  assertProblem(assert, await api('GET', `${domainsPath(orgA)}?page_token=garbage`), 400, 'invalid_argument');
});

test('no token is 401, a token without the scope 403', async () => {
  const r = await api('GET', domainsPath(orgA), { token: null });
  assertProblem(assert, r, 401, 'unauthenticated');
  assert.match(r.headers.get('www-authenticate'), /^Bearer/);
  assertProblem(assert, await api('GET', domainsPath(orgA), { token: 'nope' }), 401, 'unauthenticated');

  const reader = await tokenWithScopes(['organizations:read']);
  assert.equal((await api('GET', domainsPath(orgA), { token: reader })).status, 200);
  assertProblem(assert, await api('POST', domainsPath(orgA), { token: reader, json: { domain: newDomain() } }), 403, 'permission_denied');
  const d = await claim(orgA, newDomain());
  assertProblem(assert, await verify(orgA, d.id, { method: 'admin' }, reader), 403, 'permission_denied');
  assertProblem(assert, await api('DELETE', `${domainsPath(orgA)}/${d.id}`, { token: reader }), 403, 'permission_denied');

  const other = await tokenWithScopes(['users:read']);
  assertProblem(assert, await api('GET', domainsPath(orgA), { token: other }), 403, 'permission_denied');
});

test('verification by DNS: success, wrong value, no record, no such name, server down, timeout', async (t) => {
  const ok = await claim(orgA, newDomain('ok'));
  const wrong = await claim(orgA, newDomain('wrong'));
  const nodata = await claim(orgA, newDomain('nodata'));
  const nx = await claim(orgA, newDomain('nx'));
  const value = ok.verification_record.value;
  const dns = await startDnsmasq({
    zones: [zone],
    txt: [
      // Split into two strings, as a publisher may: they are read as one value (RFC 7208 §3.3).
      [ok.verification_record.name, ['v=spf1 -all']],
      [ok.verification_record.name, [value.slice(0, 10), value.slice(10)]],
      [wrong.verification_record.name, ['portcullis-verification=not-the-token']],
    ],
    hosts: [nodata.verification_record.name],
  });
  try {
    const r = await verify(orgA, ok.id, {});
    assert.equal(r.status, 200, r.text);
    assertNoNulls(assert, r.json);
    assert.equal(r.json.status, 'verified');
    assert.equal(r.json.verified_by, 'dns');
    assert.match(r.json.verify_time, RFC3339);
    const again = await verify(orgA, ok.id);
    assert.equal(again.status, 200, 'verifying a verified domain is harmless');
    assert.deepEqual(again.json, r.json);
    const verified = await events('domain.verified', orgA, ok.id);
    assert.deepEqual(verified, [['domain.verified', orgA, ok.domain, 'dns']]);

    const w = await verify(orgA, wrong.id, { method: 'dns' });
    assertProblem(assert, w, 400, 'failed_precondition');
    assert.match(w.json.detail, new RegExp(`${wrong.verification_record.name} has no TXT record with the expected value`));
    assert.ok(w.json.detail.includes('"portcullis-verification=not-the-token"'), w.json.detail);
    assert.ok(w.json.detail.includes(wrong.verification_record.value), 'says what to publish');

    const n = await verify(orgA, nodata.id);
    assertProblem(assert, n, 400, 'failed_precondition');
    assert.match(n.json.detail, new RegExp(`${nodata.verification_record.name} has no TXT record \\(asked 127.0.0.1:${dnsPort}\\)`));

    const x = await verify(orgA, nx.id);
    assertProblem(assert, x, 400, 'failed_precondition');
    assert.match(x.json.detail, new RegExp(`${nx.verification_record.name} does not exist in DNS`));
    assert.equal((await api('GET', `${domainsPath(orgA)}/${nx.id}`)).json.status, 'pending');
  } finally {
    await dns.stop();
  }

  await t.test('nothing listens on the nameserver port', async () => {
    const r = await verify(orgA, wrong.id);
    assertProblem(assert, r, 400, 'failed_precondition');
    assert.match(r.json.detail, /the TXT lookup of .* failed: the nameserver \(127\.0\.0\.1:\d+\) refused the connection/);
  });

  await t.test('the nameserver never answers: bounded wait, then a clear error', async () => {
    const silent = await startSilentServer();
    try {
      const started = Date.now();
      const r = await verify(orgA, wrong.id);
      const took = Date.now() - started;
      assertProblem(assert, r, 400, 'failed_precondition');
      assert.match(r.json.detail, /did not answer the TXT query for .* within 2 s \(2 tries\)/);
      assert.ok(took >= 3500 && took < 9000, `took ${took} ms`);
      assert.ok(silent.queries() >= 2, `${silent.queries()} queries`);
    } finally {
      await silent.stop();
    }
  });
});

test('verification by an administrator', async () => {
  const d = await claim(orgA, newDomain('admin'));
  const r = await verify(orgA, d.id, { method: 'admin' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.status, 'verified');
  assert.equal(r.json.verified_by, 'admin');
  const verified = await events('domain.verified', orgA, d.id);
  assert.deepEqual(verified, [['domain.verified', orgA, d.domain, 'admin']]);
});

test('a domain verified by one organization cannot be verified or claimed by another', async () => {
  const domain = newDomain('shared');
  const a = await claim(orgA, domain);
  const b = await claim(orgB, domain); // both may claim it while it is pending
  assert.equal((await verify(orgA, a.id, { method: 'admin' })).status, 200);

  const byAdmin = await verify(orgB, b.id, { method: 'admin' });
  assertProblem(assert, byAdmin, 409, 'already_exists');
  assert.match(byAdmin.json.detail, /already verified by another organization/);
  assertProblem(assert, await verify(orgB, b.id, {}), 409, 'already_exists');
  const orgC = await createOrganization();
  const late = await api('POST', domainsPath(orgC), { json: { domain } });
  assertProblem(assert, late, 409, 'already_exists');
  assert.match(late.json.detail, /already verified by another organization/);
  assert.equal((await api('GET', `${domainsPath(orgB)}/${b.id}`)).json.status, 'pending');

  // Once A lets it go, B can verify it.
  const del = await api('DELETE', `${domainsPath(orgA)}/${a.id}`);
  assert.equal(del.status, 204);
  assertProblem(assert, await api('GET', `${domainsPath(orgA)}/${a.id}`), 404, 'not_found');
  assertProblem(assert, await api('DELETE', `${domainsPath(orgA)}/${a.id}`), 404, 'not_found');
  assert.deepEqual(await events('domain.deleted', orgA, a.id), [['domain.deleted', orgA, domain, '']]);
  const now = await verify(orgB, b.id, { method: 'admin' });
  assert.equal(now.status, 200, now.text);
  assert.equal(now.json.verified_by, 'admin');
});
