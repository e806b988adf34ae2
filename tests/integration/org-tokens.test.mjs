// Which organization an access token names (docs/oauth.md, "The organization in a token") when
// no organization's identity provider or custom login proved the user: an e-mailed code with
// no organization named, with one the client forged, with one the user is an active member of
// (by organization_id and by domain_hint), and the browser session that remembers it.
// sso-oidc.test.mjs and custom-auth.test.mjs sign in through an organization.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { api, unique, createOrg, addMember } from './management.mjs';
import { authorization, redeem, orgWithDomain, firstStop } from './sso-fixtures.mjs';
import { Browser, completeAuthorization } from './browser.mjs';

// A whole authorization in `browser` (signing in by e-mailed code when asked): the org_id of
// the access token its code gives ('none' when it has none).
async function orgIdAfter(browser, params, email) {
  const auth = await authorization(params);
  const back = await completeAuthorization(browser, auth.href, email);
  const tokens = await redeem(auth, back.location);
  return { orgId: decodeJwt(tokens.access_token).org_id ?? 'none', sub: decodeJwt(tokens.access_token).sub };
}

test('org_id of e-mail sign-ins: none without an organization or with a forged one; an active member\'s named organization (organization_id, domain_hint), kept by the session', async () => {
  // An address in a domain no organization holds.
  const email = `eve.${unique()}@mail-${unique()}.example.com`;
  const plain = new Browser();
  const first = await orgIdAfter(plain, {}, email);
  assert.equal(first.orgId, 'none', 'no organization named');
  const sub = first.sub;

  // A client names an organization the user does not belong to: signed in, but not through it.
  const victim = await createOrg();
  assert.equal((await orgIdAfter(new Browser(), { organization_id: victim.id }, email)).orgId, 'none', 'forged organization_id');
  // Nor does a session that signed in through none continue into it: the browser signs in again.
  assert.equal(await firstStop(plain, { organization_id: victim.id }), '/oauth/login');
  assert.equal(await firstStop(plain, {}), 'signed in', 'the session still serves a request naming none');

  // An organization the user is an active member of, named by organization_id.
  const org = await createOrg();
  await addMember(org.id, sub);
  const member = new Browser();
  assert.equal((await orgIdAfter(member, { organization_id: org.id }, email)).orgId, org.id);
  // The session remembers it: the next authorizations (no sign-in) name it too, with or without
  // the organization named; another organization signs in again.
  assert.equal(await firstStop(member, {}), 'signed in');
  assert.equal((await orgIdAfter(member, {}, email)).orgId, org.id, 'the session\'s organization');
  assert.equal((await orgIdAfter(member, { organization_id: org.id }, email)).orgId, org.id);
  assert.equal(await firstStop(member, { organization_id: victim.id }), '/oauth/login');

  // A deactivated membership: the session that signed in through it ends, and a new sign-in
  // naming the organization gets no org_id.
  const off = await api('PUT', `/api/v1/organizations/${org.id}/users/${sub}`, { json: { roles: [], metadata: {}, status: 'inactive' } });
  assert.equal(off.status, 200, off.text);
  assert.equal(await firstStop(member, {}), '/oauth/login', 'the session ended with the membership');
  assert.equal((await orgIdAfter(new Browser(), { organization_id: org.id }, email)).orgId, 'none', 'inactive member');

  // domain_hint names the organization holding that verified domain (it has no SSO connection
  // here, so the e-mailed code serves): an active member's tokens name it, anyone else's not.
  // Another address: 5 codes per address in 10 minutes.
  const { org: holder, domain } = await orgWithDomain('hint');
  const ann = `ann.${unique()}@mail-${unique()}.example.com`;
  const outsider = await orgIdAfter(new Browser(), { domain_hint: domain }, ann);
  assert.equal(outsider.orgId, 'none', 'not a member');
  await addMember(holder.id, outsider.sub);
  assert.equal((await orgIdAfter(new Browser(), { domain_hint: domain }, ann)).orgId, holder.id);
});
