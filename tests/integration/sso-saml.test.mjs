// Enterprise SSO over SAML 2.0 (issue 13 item 2, contract §10): the service provider on Lasso.
// A whole MCP sign-in in headless Chromium through a SAML IdP made with npm `samlify` (it parses
// our HTTP-Redirect AuthnRequest and answers with its own signed Response over HTTP-POST); then
// crafted responses signed with npm `xml-crypto` for every rejection the issue lists — each
// answered by an error page and a user.login.failed event, never a session — beside the good
// crafted one that proves the harness can succeed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import * as samlify from 'samlify';
import { SignedXml } from 'xml-crypto';
import { chromium } from 'playwright-core';
import { baseUrl, varDir, sleep, dbQuery } from './harness.mjs';
import { api, unique } from './management.mjs';
import { mcpUrl, resourceId, CHROMIUM_ARGS, orgWithDomain, failureEvent, hasSession, toIdentityProvider, authorizeInBrowser,
  authorizeUrl, assertSignInPreparesNothing, followNoting, workerTimes } from './sso-fixtures.mjs';
import { openCode } from './sealed-code.mjs';
import { Browser } from './browser.mjs';
import { ScriptedProvider, connect, withAuth } from './sdk-client.mjs';

const CHROMIUM = process.env.PORTCULLIS_CHROMIUM ?? '/usr/bin/chromium';
const stackPort = Number(new URL(baseUrl).port);
const idpPort = stackPort + 6;
const idpBase = `http://127.0.0.1:${idpPort}`;
const NS = {
  samlp: 'urn:oasis:names:tc:SAML:2.0:protocol',
  saml: 'urn:oasis:names:tc:SAML:2.0:assertion',
};

samlify.setSchemaValidator({ validate: async () => 'skipped' });

let tmp;
let server;
let context;
let userDataDir;
const keys = {};

// A throwaway RSA key and self-signed certificate (PEM), made by openssl.
function keyPair(name) {
  const key = path.join(tmp, `${name}.key`);
  const cert = path.join(tmp, `${name}.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`,
    '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}

const certBody = (pem) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

function idpMetadata(entityId, cert, { wantSigned = false } = {}) {
  return `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="${wantSigned}" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certBody(cert)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${idpBase}/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
}

// The organization, its verified domain and an active SAML connection to an IdP whose
// signing key is keys.idp (`wantSigned`: its metadata says WantAuthnRequestsSigned; `extra`:
// more fields of the connection).
async function samlOrg({ wantSigned = false, extra = {} } = {}) {
  const { org, domain } = await orgWithDomain('saml');
  const idpEntity = `https://idp-${unique()}.saml.test-idp.com/metadata`;
  const c = await api('POST', `/api/v1/organizations/${org.id}/connections`, {
    json: { type: 'saml', name: 'Test SAML IdP', idp_metadata_xml: idpMetadata(idpEntity, keys.idp.cert, { wantSigned }), ...extra } });
  assert.equal(c.status, 201, c.text);
  const a = await api('PATCH', `/api/v1/organizations/${org.id}/connections/${c.json.id}`, { json: { state: 'active' } });
  assert.equal(a.status, 200, a.text);
  return { org, domain, idpEntity, connection: a.json };
}

// /oauth/authorize with a login_hint of the SAML domain, followed to the redirect to the IdP:
// returns the AuthnRequest (its ID and XML) and the RelayState.
async function toIdp(browser, email) {
  const to = await toIdentityProvider(browser, email);
  assert.equal(to.origin + to.pathname, `${idpBase}/sso`, to.href);
  const xml = inflateRawSync(Buffer.from(to.searchParams.get('SAMLRequest'), 'base64')).toString('utf8');
  const id = xml.match(/\sID="([^"]+)"/)[1];
  return { id, xml, relayState: to.searchParams.get('RelayState') };
}

const iso = (secondsFromNow) => new Date(Date.now() + secondsFromNow * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

// A Response in the shape Entra ID, Okta and Google send, unsigned.
function responseXml(p) {
  const attrs = p.email === null ? '' : `<saml:AttributeStatement><saml:Attribute Name="email"><saml:AttributeValue>${p.email ?? p.nameId}</saml:AttributeValue></saml:Attribute><saml:Attribute Name="given_name"><saml:AttributeValue>Grace</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>`;
  const inResponseTo = p.inResponseTo ? ` InResponseTo="${p.inResponseTo}"` : '';
  return `<samlp:Response xmlns:samlp="${NS.samlp}" xmlns:saml="${NS.saml}" ID="${p.responseId}" Version="2.0" IssueInstant="${iso(0)}" Destination="${p.destination}"${inResponseTo}>` +
    `<saml:Issuer>${p.issuer}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion ID="${p.assertionId}" Version="2.0" IssueInstant="${iso(0)}"><saml:Issuer>${p.issuer}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${p.nameId}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${p.scdNotOnOrAfter}" Recipient="${p.recipient}"${inResponseTo}/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${p.notBefore}" NotOnOrAfter="${p.notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${p.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(0)}" SessionIndex="_s${randomBytes(6).toString('hex')}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    attrs + '</saml:Assertion></samlp:Response>';
}

// Signs the element `what` ('Assertion' or 'Response') of `xml` with `key`, the signature
// placed after that element's Issuer (SAML Core §5.4).
function sign(xml, what, key) {
  const sig = new SignedXml({ privateKey: key.key, publicCert: key.cert, signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#' });
  sig.addReference({ xpath: `//*[local-name(.)='${what}']`, digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'] });
  sig.computeSignature(xml, { prefix: 'ds', location: { reference: `//*[local-name(.)='${what}']/*[local-name(.)='Issuer']`, action: 'after' } });
  return sig.getSignedXml();
}

function defaults(ctx, pending, email) {
  const acs = ctx.connection.sp_acs_url;
  return { responseId: `_r${randomBytes(8).toString('hex')}`, assertionId: `_a${randomBytes(8).toString('hex')}`, issuer: ctx.idpEntity,
    destination: acs, recipient: acs, audience: ctx.connection.sp_entity_id, inResponseTo: pending.id, nameId: email,
    notBefore: iso(-30), notOnOrAfter: iso(300), scdNotOnOrAfter: iso(300) };
}

const postBase64 = (browser, ctx, samlResponse, relayState) =>
  browser.request(ctx.connection.sp_acs_url, { method: 'POST', form: { SAMLResponse: samlResponse, ...(relayState === null ? {} : { RelayState: relayState }) } });
const post = (browser, ctx, pending, xml, relayState = pending.relayState) =>
  postBase64(browser, ctx, Buffer.from(xml).toString('base64'), relayState);

// The SP as samlify sees it, from the metadata Portcullis publishes (`encryptionCert`: the
// encryption certificate replaced by another one).
async function samlifySp(ctx, { encryptionCert } = {}) {
  let xml = await (await fetch(ctx.connection.sp_metadata_url)).text();
  if (encryptionCert) {
    xml = xml.replace(/(<md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>)[^<]+/, `$1${certBody(encryptionCert)}`);
  }
  return samlify.ServiceProvider({ metadata: xml });
}

// A samlify IdP of `ctx` (keys.idp), encrypting its assertions when `encrypt`.
const samlifyIdp = (ctx, { encrypt = false, wantSigned = false } = {}) => samlify.IdentityProvider({
  metadata: idpMetadata(ctx.idpEntity, keys.idp.cert, { wantSigned }), privateKey: keys.idp.key,
  isAssertionEncrypted: encrypt, wantAuthnRequestsSigned: wantSigned });

// The Response `xml` with its Assertion encrypted to the SP's encryption certificate (as
// samlify's IdP does it: AES-256-CBC content key wrapped with RSA-OAEP), base64.
// (SamlLib is a getter on module.exports, which the ESM namespace does not name.)
const encrypted = (idp, sp, xml) => (samlify.SamlLib ?? samlify.default.SamlLib).encryptAssertion(idp, sp, xml);

before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'portcullis-saml-'));
  keys.idp = keyPair('idp');
  keys.attacker = keyPair('attacker');
});

after(async () => {
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  if (server) { server.closeAllConnections?.(); await new Promise((r) => server.close(r)); }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('SP metadata: entity id, HTTP-POST ACS, signed assertions wanted, signing and encryption certificates', async () => {
  const ctx = await samlOrg();
  const r = await fetch(ctx.connection.sp_metadata_url);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /samlmetadata\+xml/);
  const xml = await r.text();
  assert.ok(xml.includes(`entityID="${ctx.connection.sp_entity_id}"`));
  assert.ok(xml.includes(`Location="${ctx.connection.sp_acs_url}"`));
  assert.ok(xml.includes('WantAssertionsSigned="true"'));
  assert.ok(xml.includes('AuthnRequestsSigned="false"'), 'this IdP does not want signed requests');
  // Two key pairs of the SP, their certificates as the API shows them (the private keys never).
  const signing = xml.match(/<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>([^<]+)/)?.[1];
  const encryption = xml.match(/<md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>([^<]+)/)?.[1];
  assert.ok(signing && encryption && signing !== encryption, 'separate signing and encryption keys');
  assert.equal(certBody(ctx.connection.sp_signing_certificate), signing);
  assert.equal(certBody(ctx.connection.sp_encryption_certificate), encryption);
  const got = await api('GET', `/api/v1/organizations/${ctx.org.id}/connections/${ctx.connection.id}`);
  assert.equal(got.json.sp_signing_certificate, ctx.connection.sp_signing_certificate);
  assert.ok(!/PRIVATE KEY/.test(got.text), 'no private key in the API');
  const sealed = dbQuery(`SELECT sp_keys_sealed FROM sso_connections WHERE id = '${ctx.connection.id}'`)[0][0];
  assert.ok(sealed && !/PRIVATE KEY/.test(sealed), 'the private keys are sealed at rest');
});

test('signed AuthnRequests: an IdP whose metadata wants them gets SigAlg rsa-sha256 that samlify verifies, refusing the unsigned or altered request; sign_authn_requests signs for any IdP', async () => {
  const ctx = await samlOrg({ wantSigned: true });
  const sp = await samlifySp(ctx);
  assert.ok((await (await fetch(ctx.connection.sp_metadata_url)).text()).includes('AuthnRequestsSigned="true"'));
  const idp = samlifyIdp(ctx, { wantSigned: true });
  const octet = (query) => query.split('&').filter((p) => !p.startsWith('Signature=')).join('&');
  const parse = (query) => idp.parseLoginRequest(sp, 'redirect', { query: Object.fromEntries(new URLSearchParams(query)), octetString: octet(query) });

  const b = new Browser();
  const who = `signed.${unique()}@${ctx.domain}`;
  const to = await toIdentityProvider(b, who);
  assert.equal(to.searchParams.get('SigAlg'), 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
  assert.ok(to.searchParams.get('Signature'));
  const query = to.href.slice(to.href.indexOf('?') + 1);
  const parsed = await parse(query);
  const requestXml = inflateRawSync(Buffer.from(to.searchParams.get('SAMLRequest'), 'base64')).toString('utf8');
  assert.equal(parsed.extract.request.id, requestXml.match(/\sID="([^"]+)"/)[1]);
  // The same request without its signature, or with another RelayState: samlify refuses both.
  const unsigned = query.split('&').filter((p) => !/^(Signature|SigAlg)=/.test(p)).join('&');
  await assert.rejects(parse(unsigned), /ERR_MISSING_SIG_ALG/);
  await assert.rejects(parse(query.replace(/RelayState=[^&]*/, 'RelayState=forged')), /ERR_FAILED_MESSAGE_SIGNATURE_VERIFICATION/);

  // samlify answers the signed request; the sign-in completes.
  const { context: samlResponse } = await idp.createLoginResponse(sp, parsed, 'post', { email: who }, undefined, false, to.searchParams.get('RelayState'));
  const acs = await postBase64(b, ctx, samlResponse, to.searchParams.get('RelayState'));
  assert.equal(acs.status, 303, acs.html?.slice(0, 500));
  const done = await b.follow(acs.location);
  assert.match(done.url, /\/oauth\/consent\?/);
  assert.ok(hasSession(b));

  // An IdP that does not ask: unsigned, until the connection asks for signatures.
  const plain = await samlOrg();
  const first = await toIdentityProvider(new Browser(), `plain.${unique()}@${plain.domain}`);
  assert.equal(first.searchParams.get('SigAlg'), null);
  assert.equal(first.searchParams.get('Signature'), null);
  const patched = await api('PATCH', `/api/v1/organizations/${plain.org.id}/connections/${plain.connection.id}`, { json: { sign_authn_requests: true } });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json.sign_authn_requests, true);
  const again = await toIdentityProvider(new Browser(), `plain.${unique()}@${plain.domain}`);
  assert.equal(again.searchParams.get('SigAlg'), 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
  const strict = samlifyIdp(plain, { wantSigned: true });
  const q2 = again.href.slice(again.href.indexOf('?') + 1);
  await strict.parseLoginRequest(await samlifySp(plain), 'redirect', { query: Object.fromEntries(again.searchParams), octetString: octet(q2) });
});

test('encrypted assertions: samlify encrypts to the certificate of the SP metadata and the sign-in completes; a decrypted assertion gets every check a plain one does; encrypted to another key is refused', async () => {
  const ctx = await samlOrg();
  const sp = await samlifySp(ctx);
  const idp = samlifyIdp(ctx, { encrypt: true });

  // samlify's own encrypted Response to our AuthnRequest.
  {
    const b = new Browser();
    const who = `enc.${unique()}@${ctx.domain}`;
    const to = await toIdentityProvider(b, who);
    const parsed = await idp.parseLoginRequest(sp, 'redirect', { query: Object.fromEntries(to.searchParams) });
    const { context: samlResponse } = await idp.createLoginResponse(sp, parsed, 'post', { email: who }, undefined, false, to.searchParams.get('RelayState'));
    const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
    assert.match(xml, /EncryptedAssertion/);
    assert.doesNotMatch(xml, /<saml:Assertion/);
    const acs = await postBase64(b, ctx, samlResponse, to.searchParams.get('RelayState'));
    assert.equal(acs.status, 303, acs.html?.slice(0, 500));
    const done = await b.follow(acs.location);
    assert.match(done.url, /\/oauth\/consent\?/);
    assert.ok(hasSession(b));
  }

  // Crafted responses, each encrypted as samlify does: the good one, then attacks.
  const email = () => `enc.${unique()}@${ctx.domain}`;
  {
    const b = new Browser();
    const who = email();
    const pending = await toIdp(b, who);
    const good = defaults(ctx, pending, who);
    const r = await postBase64(b, ctx, await encrypted(idp, sp, sign(responseXml(good), 'Assertion', keys.idp)), pending.relayState);
    assert.equal(r.status, 303, r.html.slice(0, 800));
    assert.match((await b.follow(r.location)).url, /\/oauth\/consent\?/);
    // The same assertion again, encrypted afresh, in another sign-in: a replay.
    const b2 = new Browser();
    const p2 = await toIdp(b2, who);
    const replay = await postBase64(b2, ctx, await encrypted(idp, sp, sign(responseXml({ ...defaults(ctx, p2, who), assertionId: good.assertionId }), 'Assertion', keys.idp)), p2.relayState);
    assert.equal(replay.status, 403);
    assert.ok(!hasSession(b2));
    await failureEvent(ctx.org.id, 'replayed_assertion');
  }
  const other = await samlifySp(ctx, { encryptionCert: keys.attacker.cert });
  const cases = [
    ['encrypted to another key', 'decryption_failed', (p) => encrypted(idp, other, sign(responseXml(p), 'Assertion', keys.idp))],
    ['encrypted, unsigned inside', 'unsigned', (p) => encrypted(idp, sp, responseXml(p))],
    ['encrypted, signed by another key', 'invalid_signature', (p) => encrypted(idp, sp, sign(responseXml(p), 'Assertion', keys.attacker))],
    ['encrypted, wrong Audience', 'wrong_audience', (p) => encrypted(idp, sp, sign(responseXml({ ...p, audience: 'https://another-sp.example.com' }), 'Assertion', keys.idp))],
    ['encrypted, wrong Recipient', 'wrong_recipient', (p) => encrypted(idp, sp, sign(responseXml({ ...p, recipient: `${baseUrl}/sso/saml/conn_other/acs` }), 'Assertion', keys.idp))],
    ['encrypted, expired', 'expired', (p) => encrypted(idp, sp, sign(responseXml({ ...p, notOnOrAfter: iso(-600), scdNotOnOrAfter: iso(-600) }), 'Assertion', keys.idp))],
    ['encrypted, InResponseTo of another request', 'in_response_to_mismatch', (p) => encrypted(idp, sp, sign(responseXml({ ...p, inResponseTo: `_other${randomBytes(6).toString('hex')}` }), 'Assertion', keys.idp))],
    ['encrypted, comment injected into NameID', 'xml_comment', (p) => {
      const victim = p.nameId;
      const signed = sign(responseXml({ ...p, nameId: `eve@evil.com.${victim.split('@')[1]}`, email: `eve@evil.com.${victim.split('@')[1]}` }), 'Assertion', keys.idp);
      return encrypted(idp, sp, signed.replaceAll('eve@evil.com.', 'eve@evil.com<!---->.'));
    }],
    ['a plain assertion beside the encrypted one', 'assertion_count', async (p) => {
      const enc = Buffer.from(await encrypted(idp, sp, sign(responseXml(p), 'Assertion', keys.idp)), 'base64').toString('utf8');
      const plainOne = sign(responseXml({ ...p, assertionId: '_beside' }), 'Assertion', keys.idp).match(/<saml:Assertion[\s\S]*<\/saml:Assertion>/)[0];
      return Buffer.from(enc.replace('<samlp:Status>', `${plainOne}<samlp:Status>`)).toString('base64');
    }],
  ];
  for (const [name, reason, make] of cases) {
    const b = new Browser();
    const who = email();
    const pending = await toIdp(b, who);
    const r = await postBase64(b, ctx, await make(defaults(ctx, pending, who)), pending.relayState);
    assert.equal(r.status, 403, `${name}: ${r.status} ${r.location ?? ''} ${r.html.slice(0, 300)}`);
    assert.match(r.html, /Single sign-on failed/, name);
    assert.ok(!hasSession(b), `${name}: no session`);
    const e = await failureEvent(ctx.org.id, reason);
    assert.equal(e.method, 'sso', name);
  }
});

test('Chromium, whole MCP flow through a samlify IdP: discovery, DCR, authorize, e-mail of a verified domain, IdP, ACS, consent, token, whoami', async () => {
  const ctx = await samlOrg();
  const spMetadata = await (await fetch(ctx.connection.sp_metadata_url)).text();
  const sp = samlify.ServiceProvider({ metadata: spMetadata });
  const idp = samlify.IdentityProvider({ metadata: idpMetadata(ctx.idpEntity, keys.idp.cert), privateKey: keys.idp.key,
    isAssertionEncrypted: false, wantAuthnRequestsSigned: false });
  const user = { email: `grace.${unique()}@${ctx.domain}` };
  let idpMs = 0;
  server = http.createServer(async (req, res) => {
    const started = process.hrtime.bigint();
    try {
      const url = new URL(req.url, idpBase);
      if (url.pathname !== '/sso') { res.writeHead(404).end(); return; }
      const parsed = await idp.parseLoginRequest(sp, 'redirect', { query: Object.fromEntries(url.searchParams) });
      const { context: samlResponse } = await idp.createLoginResponse(sp, parsed, 'post', user, undefined, false, url.searchParams.get('RelayState'));
      const page = `<!doctype html><html><body><form method="post" action="${ctx.connection.sp_acs_url}">` +
        `<input type="hidden" name="SAMLResponse" value="${samlResponse}"><input type="hidden" name="RelayState" value="${url.searchParams.get('RelayState')}">` +
        '<button type="submit">Continue</button></form><script>document.forms[0].submit()</script></body></html>';
      res.writeHead(200, { 'content-type': 'text/html' }).end(page);
    } catch (e) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(e?.stack ?? e));
    } finally {
      idpMs += Number(process.hrtime.bigint() - started) / 1e6;
    }
  });
  await new Promise((r) => server.listen(idpPort, '127.0.0.1', r));

  userDataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-chromium-saml-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true,
    args: CHROMIUM_ARGS });
  const issuer = `${baseUrl}/resources/${resourceId}`;
  const ssoLog = path.join(varDir, 'log', 'sso.log');
  const before = readFileSync(ssoLog, 'utf8').split('\n').length;

  class ChromiumProvider extends ScriptedProvider {
    async redirectToAuthorization(url) {
      this.redirects.push(url);
      const page = await context.newPage();
      const visited = [];
      page.on('framenavigated', (f) => { if (f === page.mainFrame()) visited.push(f.url()); });
      let back;
      await page.route('http://127.0.0.1:3000/**', (route) => { back = new URL(route.request().url()); return route.fulfill({ status: 200, body: 'ok' }); });
      await page.goto(url.href);
      await page.fill('input[name=email]', this.email);
      await page.press('input[name=email]', 'Enter');
      await page.waitForSelector('button[name=decision][value=allow]', { timeout: 20000 }).catch(async () => {
        assert.fail(`no consent page; at ${page.url()}: ${(await page.content()).slice(0, 1500)}`);
      });
      await page.click('button[name=decision][value=allow]');
      for (let i = 0; i < 100 && !back; i++) await sleep(100);
      await page.close();
      this.visited = visited;
      assert.ok(back, `no code; visited ${visited.join(' → ')}`);
      this.code = back.searchParams.get('code');
    }
  }
  const provider = new ChromiumProvider(user.email, { issuer: () => issuer, grantTypes: ['authorization_code'] });
  const session = await connect(mcpUrl, provider);
  const paths = provider.visited.map((u) => new URL(u).pathname);
  // Committed navigations only: the ACS and the finish are redirects on the way to consent
  // (the sso log below shows them).
  for (const step of ['/oauth/login', '/sso', '/oauth/consent']) assert.ok(paths.includes(step), `${step} in ${paths.join(' → ')}`);
  const me = JSON.parse((await withAuth(provider, session, () => session.client.callTool({ name: 'whoami', arguments: {} }))).content[0].text);
  assert.equal(me.email, user.email);
  await session.client.close();
  const u = await api('GET', `/api/v1/users/${me.sub}`);
  assert.equal(u.json.memberships.find((m) => m.organization_id === ctx.org.id)?.provisioned_by, 'sso');
  // The IdP's account (its NameID, under the connection) is among the user's identities.
  const linked = u.json.identities?.filter((i) => i.connection_id === ctx.connection.id) ?? [];
  assert.deepEqual(linked.map((i) => i.provider), ['saml'], JSON.stringify(u.json.identities));
  assert.ok(linked[0].subject.length > 0);

  const lines = readFileSync(ssoLog, 'utf8').split('\n').slice(before - 1).map((l) => { try { return JSON.parse(l); } catch { return {}; } });
  const hops = lines.filter((l) => ['/sso/start', `/sso/saml/${ctx.connection.id}/acs`, '/sso/saml/finish'].includes(l.path));
  assert.deepEqual(hops.map((l) => [l.path.replace(ctx.connection.id, '{id}'), l.status]),
    [['/sso/start', 303], ['/sso/saml/{id}/acs', 303], ['/sso/saml/finish', 303]]);
  const ours = hops.reduce((s, l) => s + l.duration_us / 1000, 0);
  console.log(`# sso-timing: portcullis ${ours.toFixed(1)} ms of server time for the SAML round trip (start + ACS + finish; the IdP's own page took ${idpMs.toFixed(1)} ms)`);
});

test('crafted SAML responses: the good one signs in; 16 attacks each end on an error page and an event, never a session', async () => {
  const ctx = await samlOrg();
  const email = () => `ada.${unique()}@${ctx.domain}`;

  // The good case: proves the crafted harness can succeed, and that 60 s past NotOnOrAfter is
  // within the allowed skew.
  {
    const b = new Browser();
    const who = email();
    const pending = await toIdp(b, who);
    const r = await post(b, ctx, pending, sign(responseXml({ ...defaults(ctx, pending, who), scdNotOnOrAfter: iso(-60), notOnOrAfter: iso(-60) }), 'Assertion', keys.idp));
    assert.equal(r.status, 303, r.html.slice(0, 800));
    const done = await b.follow(r.location);
    assert.equal(done.status, 200, done.html.slice(0, 800));
    assert.match(done.url, /\/oauth\/consent\?/);
    assert.match(done.html, /name="decision"/);
    assert.ok(hasSession(b));
    // Signed in through the connection's organization: the code (and so its tokens) names it
    // (docs/oauth.md, "The organization in a token").
    const back = await b.submit(done, 'decision', { decision: 'allow' });
    assert.equal(openCode(new URL(back.location).searchParams.get('code'))?.organization_id, ctx.org.id);
  }

  const cases = [
    ['unsigned', 'unsigned', (p) => responseXml(p)],
    ['signed by another key', 'invalid_signature', (p) => sign(responseXml(p), 'Assertion', keys.attacker)],
    ['signed response, assertion edited after signing', 'invalid_signature', (p) => sign(responseXml(p), 'Response', keys.idp).replace('>Grace<', '>Mallory<')],
    ['XSW: an unsigned assertion beside the signed one', 'assertion_count', (p) => {
      const signed = sign(responseXml(p), 'Assertion', keys.idp);
      const evil = responseXml({ ...p, assertionId: '_evil', nameId: `boss@${ctx.domain}` }).match(/<saml:Assertion[\s\S]*<\/saml:Assertion>/)[0];
      return signed.replace('<saml:Assertion ', `${evil}<saml:Assertion `);
    }],
    ['XSW: the signed assertion moved into Extensions, an evil one in its place', 'assertion_count', (p) => {
      const signed = sign(responseXml(p), 'Assertion', keys.idp);
      const original = signed.match(/<saml:Assertion[\s\S]*<\/saml:Assertion>/)[0];
      const evil = responseXml({ ...p, nameId: `boss@${ctx.domain}`, email: `boss@${ctx.domain}` }).match(/<saml:Assertion[\s\S]*<\/saml:Assertion>/)[0];
      return signed.replace(original, evil).replace('<samlp:Status>', `<samlp:Extensions>${original}</samlp:Extensions><samlp:Status>`);
    }],
    ['XSW: the response signature references the assertion', 'signature_wrapping', (p) => {
      const signed = sign(responseXml(p), 'Assertion', keys.idp);
      const signature = signed.match(/<ds:Signature[\s\S]*<\/ds:Signature>/)[0];
      return signed.replace(signature, '').replace('</saml:Issuer><samlp:Status>', `</saml:Issuer>${signature}<samlp:Status>`);
    }],
    ['comment injected into NameID and e-mail', 'xml_comment', (p) => {
      const victim = p.nameId;
      const signed = sign(responseXml({ ...p, nameId: `eve@evil.com.${victim.split('@')[1]}`, email: `eve@evil.com.${victim.split('@')[1]}` }), 'Assertion', keys.idp);
      return signed.replaceAll('eve@evil.com.', 'eve@evil.com<!---->.');
    }],
    ['doubly signed assertion', 'double_signature', (p) => {
      const once = sign(responseXml(p), 'Assertion', keys.idp);
      const signature = once.match(/<ds:Signature[\s\S]*<\/ds:Signature>/)[0];
      return once.replace(signature, signature + signature);
    }],
    ['wrong Audience', 'wrong_audience', (p) => sign(responseXml({ ...p, audience: 'https://another-sp.example.com' }), 'Assertion', keys.idp)],
    ['wrong Recipient', 'wrong_recipient', (p) => sign(responseXml({ ...p, recipient: `${baseUrl}/sso/saml/conn_other/acs` }), 'Assertion', keys.idp)],
    ['wrong Destination', 'wrong_destination', (p) => sign(responseXml({ ...p, destination: 'https://another-sp.example.com/acs' }), 'Assertion', keys.idp)],
    ['expired (NotOnOrAfter 10 minutes ago)', 'expired', (p) => sign(responseXml({ ...p, notOnOrAfter: iso(-600), scdNotOnOrAfter: iso(-600) }), 'Assertion', keys.idp)],
    ['not yet valid (NotBefore in 10 minutes)', 'not_yet_valid', (p) => sign(responseXml({ ...p, notBefore: iso(600) }), 'Assertion', keys.idp)],
    ['InResponseTo of another request', 'in_response_to_mismatch', (p) => sign(responseXml({ ...p, inResponseTo: `_other${randomBytes(6).toString('hex')}` }), 'Assertion', keys.idp)],
    ['a DTD (entity expansion)', 'dtd_forbidden', (p) => `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x "xxxxxxxx">]>${sign(responseXml(p), 'Assertion', keys.idp)}`],
    ['wrong issuer', 'wrong_issuer', (p) => sign(responseXml({ ...p, issuer: 'https://unknown-idp.example.com' }), 'Assertion', keys.idp)],
  ];
  for (const [name, reason, make] of cases) {
    const b = new Browser();
    const who = email();
    const pending = await toIdp(b, who);
    const r = await post(b, ctx, pending, make(defaults(ctx, pending, who)));
    assert.equal(r.status, 403, `${name}: ${r.status} ${r.location ?? ''} ${r.html.slice(0, 300)}`);
    assert.match(r.html, /Single sign-on failed/, name);
    assert.ok(!hasSession(b), `${name}: no session`);
    const e = await failureEvent(ctx.org.id, reason);
    assert.equal(e.method, 'sso', name);
  }
});

// One sign-in with a crafted (signed) Response, as the browser sees it, from the MCP client's
// authorization request to the consent page: the worker-side time of every Portcullis hop in
// between (home-realm discovery, /sso/start with its AuthnRequest, the ACS, the finish).
async function timedSamlSignIn(ctx) {
  const b = new Browser();
  const who = `t.${unique()}@${ctx.domain}`;
  const hops = [];
  const to = await followNoting(b, await authorizeUrl({ login_hint: who }), hops);
  assert.equal(to.status, 303, to.html.slice(0, 500));
  const at = new URL(to.location);
  assert.equal(at.origin + at.pathname, `${idpBase}/sso`, at.href);
  const xml = inflateRawSync(Buffer.from(at.searchParams.get('SAMLRequest'), 'base64')).toString('utf8');
  const pending = { id: xml.match(/\sID="([^"]+)"/)[1], relayState: at.searchParams.get('RelayState') };
  const response = Buffer.from(sign(responseXml(defaults(ctx, pending, who)), 'Assertion', keys.idp)).toString('base64');
  const done = await followNoting(b, ctx.connection.sp_acs_url, hops,
    { method: 'POST', form: { SAMLResponse: response, RelayState: pending.relayState } });
  assert.equal(done.status, 200, done.html.slice(0, 500));
  assert.match(done.url, /\/oauth\/consent\?/);
  assert.ok(hasSession(b), 'signed in');
  const sso = (await workerTimes(hops)).filter((h) => h.path !== '/oauth/authorize' && h.path !== '/oauth/consent');
  assert.deepEqual(sso.filter((h) => h.path.startsWith('/sso/')).map((h) => h.path.replace(ctx.connection.id, '{id}')),
    ['/sso/start', '/sso/saml/{id}/acs', '/sso/saml/finish']);
  return { hops: sso, ours: sso.reduce((t, h) => t + h.ms, 0) };
}

test('the SSO login prepares nothing on its request path, on a cold worker (the first sign-in after a restart) and a warm one', async () => {
  const ctx = await samlOrg();
  await assertSignInPreparesNothing('saml', () => timedSamlSignIn(ctx));
});

test('SAML: replayed assertion ids, unsolicited responses and another browser at the finish are refused', async () => {
  const ctx = await samlOrg();
  const who = `replay.${unique()}@${ctx.domain}`;
  const first = new Browser();
  const p1 = await toIdp(first, who);
  const fields = defaults(ctx, p1, who);
  const ok = await post(first, ctx, p1, sign(responseXml(fields), 'Assertion', keys.idp));
  assert.equal(ok.status, 303, ok.html.slice(0, 500));

  // The same assertion id again, in a fresh, properly bound sign-in.
  const second = new Browser();
  const p2 = await toIdp(second, who);
  const replay = await post(second, ctx, p2, sign(responseXml({ ...defaults(ctx, p2, who), assertionId: fields.assertionId }), 'Assertion', keys.idp));
  assert.equal(replay.status, 403);
  await failureEvent(ctx.org.id, 'replayed_assertion');

  // IdP-initiated: no RelayState and no InResponseTo; off by default.
  const third = new Browser();
  const p3 = await toIdp(third, who);
  const unsolicited = await post(third, ctx, p3, sign(responseXml({ ...defaults(ctx, p3, who), inResponseTo: null }), 'Assertion', keys.idp), null);
  assert.equal(unsolicited.status, 403);
  await failureEvent(ctx.org.id, 'unsolicited_response');

  // The ACS passed, but the finish is opened by another browser: refused, and the owner's
  // browser still finishes.
  const owner = new Browser();
  const p4 = await toIdp(owner, who);
  const acs = await post(owner, ctx, p4, sign(responseXml(defaults(ctx, p4, who)), 'Assertion', keys.idp));
  assert.equal(acs.status, 303);
  const thief = new Browser();
  const stolen = await thief.request(acs.location);
  assert.equal(stolen.status, 403);
  assert.ok(!hasSession(thief));
  await failureEvent(ctx.org.id, 'state_other_browser');
  const mine = await owner.follow(acs.location);
  assert.equal(mine.status, 200, mine.html.slice(0, 500));
  assert.match(mine.url, /\/oauth\/consent\?/);
  assert.ok(hasSession(owner));
});

// An unsolicited (IdP-initiated) Response for `who`: no InResponseTo, signed by keys.idp.
function unsolicitedXml(ctx, who, overrides = {}) {
  const acs = ctx.connection.sp_acs_url;
  return responseXml({ responseId: `_r${randomBytes(8).toString('hex')}`, assertionId: `_a${randomBytes(8).toString('hex')}`, issuer: ctx.idpEntity,
    destination: acs, recipient: acs, audience: ctx.connection.sp_entity_id, inResponseTo: null, nameId: who,
    notBefore: iso(-30), notOnOrAfter: iso(300), scdNotOnOrAfter: iso(300), ...overrides });
}
const b64 = (xml) => Buffer.from(xml).toString('base64');

test('IdP-initiated login: refused by default (page and event); enabled, accepted only with every check and once, landing signed in on our page, never at the RelayState', async () => {
  const ctx = await samlOrg();
  assert.equal(ctx.connection.idp_initiated_login_enabled, false, 'off by default');
  const who = `tile.${unique()}@${ctx.domain}`;

  const off = new Browser();
  const refused = await postBase64(off, ctx, b64(sign(unsolicitedXml(ctx, who), 'Assertion', keys.idp)), null);
  assert.equal(refused.status, 403);
  assert.match(refused.html, /IdP-initiated/);
  assert.ok(!hasSession(off));
  await failureEvent(ctx.org.id, 'unsolicited_response');

  const on = await api('PATCH', `/api/v1/organizations/${ctx.org.id}/connections/${ctx.connection.id}`, { json: { idp_initiated_login_enabled: true } });
  assert.equal(on.status, 200, on.text);
  assert.equal(on.json.idp_initiated_login_enabled, true);

  // Every check still applies: each of these is refused, with its reason.
  const cases = [
    ['unsigned', 'unsigned', () => unsolicitedXml(ctx, who)],
    ['signed by another key', 'invalid_signature', () => sign(unsolicitedXml(ctx, who), 'Assertion', keys.attacker)],
    ['wrong Audience', 'wrong_audience', () => sign(unsolicitedXml(ctx, who, { audience: 'https://another-sp.example.com' }), 'Assertion', keys.idp)],
    ['expired', 'expired', () => sign(unsolicitedXml(ctx, who, { notOnOrAfter: iso(-600), scdNotOnOrAfter: iso(-600) }), 'Assertion', keys.idp)],
    ['a response to some AuthnRequest', 'in_response_to_mismatch', () => sign(unsolicitedXml(ctx, who, { inResponseTo: `_req${randomBytes(6).toString('hex')}` }), 'Assertion', keys.idp)],
    ['a user of another domain', 'email_domain_not_verified', () => sign(unsolicitedXml(ctx, `eve.${unique()}@elsewhere.example.com`), 'Assertion', keys.idp)],
  ];
  for (const [name, reason, make] of cases) {
    const b = new Browser();
    const r = await postBase64(b, ctx, b64(make()), null);
    assert.equal(r.status, 403, `${name}: ${r.status} ${r.location ?? ''} ${r.html.slice(0, 300)}`);
    assert.ok(!hasSession(b), `${name}: no session`);
    await failureEvent(ctx.org.id, reason);
  }

  // The good one: a session and our landing page, whatever the RelayState says.
  const b = new Browser();
  const xml = sign(unsolicitedXml(ctx, who), 'Assertion', keys.idp);
  const ok = await postBase64(b, ctx, b64(xml), 'https://evil.example.com/steal');
  assert.equal(ok.status, 303, ok.html.slice(0, 500));
  assert.equal(ok.location, `${baseUrl}/sso/saml/signed-in`);
  assert.ok(hasSession(b));
  const landing = await b.follow(ok.location);
  assert.equal(landing.status, 200);
  assert.match(landing.html, /You are signed in/);
  assert.ok(landing.html.includes(who.toLowerCase()), landing.html.slice(0, 800));
  let succeeded;
  for (let i = 0; i < 40 && !succeeded; i++) {
    succeeded = dbQuery(`SELECT data FROM events WHERE type = 'user.login.succeeded' AND organization_id = '${ctx.org.id}'`).map(([d]) => JSON.parse(d)).find((d) => d.idp_initiated);
    if (!succeeded) await sleep(100);
  }
  assert.equal(succeeded?.connection_id, ctx.connection.id);
  // The session serves a client's own authorization request: straight to consent, as that user.
  const consent = await authorizeInBrowser(b, {});
  assert.equal(consent.status, 200, consent.html.slice(0, 500));
  assert.match(consent.url, /\/oauth\/consent\?/);
  assert.ok(consent.html.includes(who.toLowerCase()));
  // The session signed in through the connection's organization: its code names it.
  const issued = await b.submit(consent, 'decision', { decision: 'allow' });
  assert.equal(openCode(new URL(issued.location).searchParams.get('code'))?.organization_id, ctx.org.id);

  // The same Response again: a replay, refused.
  const again = new Browser();
  const replay = await postBase64(again, ctx, b64(xml), null);
  assert.equal(replay.status, 403);
  assert.ok(!hasSession(again));
  await failureEvent(ctx.org.id, 'replayed_assertion');
  // Without a session the landing page says so.
  const nobody = await new Browser().request(`${baseUrl}/sso/saml/signed-in`);
  assert.equal(nobody.status, 403);
});

test('Chromium, IdP-initiated: a page of the IdP posts an unsolicited samlify Response; the browser keeps the session and lands signed in', async () => {
  const ctx = await samlOrg({ extra: { idp_initiated_login_enabled: true } });
  const sp = await samlifySp(ctx);
  const idp = samlifyIdp(ctx);
  const who = `chromium.${unique()}@${ctx.domain}`;
  const { context: samlResponse } = await idp.createLoginResponse(sp, undefined, 'post', { email: who });
  assert.doesNotMatch(Buffer.from(samlResponse, 'base64').toString('utf8'), /InResponseTo="[^"]/);
  const page = `<!doctype html><html><body><form method="post" action="${ctx.connection.sp_acs_url}">` +
    `<input type="hidden" name="SAMLResponse" value="${samlResponse}"></form><script>document.forms[0].submit()</script></body></html>`;
  // The IdP's origin (its port, free again once the samlify IdP of the first Chromium test ends).
  if (server) { server.closeAllConnections?.(); await new Promise((r) => server.close(r)); }
  server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page));
  await new Promise((r) => server.listen(idpPort, '127.0.0.1', r));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-chromium-idpinit-'));
  const browser = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const tab = await browser.newPage();
    await tab.goto(`${idpBase}/tile`);
    await tab.waitForURL(/\/sso\/saml\/signed-in/, { timeout: 20000 });
    const text = await tab.textContent('body');
    assert.match(text, /You are signed in/);
    assert.ok(text.includes(who.toLowerCase()), text);
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
