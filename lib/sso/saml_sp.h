// The SAML 2.0 service provider (issue 13 item 2) on Lasso, the library behind Apache's
// mod_auth_mellon (docs/sso.md says why): SP-initiated login, the AuthnRequest over
// HTTP-Redirect, the Response over HTTP-POST.
//
// Lasso parses the response, decrypts an EncryptedAssertion with the SP's encryption key,
// signs the HTTP-Redirect AuthnRequest with the SP's signing key when the IdP wants it, and
// verifies the XML signatures with the certificate of the IdP's metadata (a valid Response
// signature, or else a valid signature of the Assertion; an invalid one anywhere refuses). Like
// mellon, the checks Lasso leaves to the SP are done here: the document's shape first
// (saml_shape.h: wrapping, double signatures, comments, DTDs), then Destination, one bearer
// SubjectConfirmation with Recipient = our ACS, NotOnOrAfter and InResponseTo, Conditions
// NotBefore/NotOnOrAfter (kSamlSkewSeconds of skew) and the AudienceRestriction naming our entity
// id. Replays and the binding of InResponseTo to the browser are the caller's (sso_requests.h,
// saml_assertions in the store).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "sso/connection.h"
#include "sso/provisioning.h"

namespace portcullis::sso {

inline constexpr int64_t kSamlSkewSeconds = 120;

// What the SP is called at the IdP: entity id {base}/sso/saml/{id}/metadata, ACS
// {base}/sso/saml/{id}/acs; and its own keys (sp_keys.h).
struct SamlSp {
  std::string entity_id;
  std::string acs_url;
  SpCertificates certificates;  // none: requests go unsigned and nothing can be decrypted
  // Opens the private keys; called only when a worker builds its Lasso server for the
  // connection (once per worker and configuration).
  std::function<Result<SpKeys>()> keys;
};
SamlSp sp_of(const std::string& base_url, const std::string& connection_id);

// The SP's metadata document (SAML 2.0 Metadata §2.4.4): HTTP-POST ACS, signed assertions
// wanted, e-mail NameID format, the signing and encryption certificates (KeyDescriptor use
// "signing" / "encryption") and AuthnRequestsSigned as given.
std::string sp_metadata(const SamlSp& sp, bool authn_requests_signed);

// Whether the AuthnRequests of this connection are signed: the connection asks for it
// (sign_authn_requests) or the IdP's metadata says WantAuthnRequestsSigned="true".
Result<bool> signs_authn_requests(const Connection& c, const SamlSp& sp);

// The IdP's metadata: the connection's document, or one built from entity id, SSO URL and
// certificates. FailedPrecondition when Lasso cannot use it (no IdP, no SSO service, no key).
Status check_idp_metadata(const Connection& c, const SamlSp& sp);

// The worker's Lasso server for the connection (SP metadata and keys, the IdP's metadata),
// built now unless the cached one is of this very configuration: what a sign-in would build
// on first use (100–300 ms), done ahead of it (warm.h). A worker keeps at most
// kMaxCachedServers; every use checks that the cached one is of the connection's current
// configuration, so a changed connection is never served by a stale server.
inline constexpr size_t kMaxCachedServers = 256;
Status prepare_server(const Connection& c, const SamlSp& sp);
// Drops the cached servers of every connection but these (no longer active ones).
void keep_servers_of(const std::set<std::string>& connection_ids);

struct SamlRedirect {
  std::string url;         // the IdP's SSO URL with SAMLRequest (deflated) and RelayState, and
                           // SigAlg (rsa-sha256) and Signature when signs_authn_requests
  std::string request_id;  // the AuthnRequest's ID: the response's InResponseTo
};
Result<SamlRedirect> authn_request(const Connection& c, const SamlSp& sp,
                                   const std::string& relay_state);

struct SamlLogin {
  std::string assertion_id;
  std::string in_response_to;  // empty for an unsolicited (IdP-initiated) response
  int64_t not_on_or_after = 0;
  std::string name_id;
  std::string name_id_format;
  std::map<std::string, std::vector<std::string>> attributes;
};

// The verified login of a base64 SAMLResponse, or a Status with `reason` set (docs/sso.md).
// An EncryptedAssertion is decrypted with the SP's encryption key (Lasso), then checked as a
// plain one: its shape (saml_shape.h), its signature, and everything below.
Result<SamlLogin> read_response(const Connection& c, const SamlSp& sp,
                                const std::string& saml_response, int64_t now, std::string& reason);

// The user the assertion describes, through the connection's mapping: an attribute named by
// the mapping (or by the well-known Entra ID claim URIs), else the NameID for the e-mail.
AssertedUser user_from_saml(const SamlLogin& login, const AttributeMapping& mapping);

}  // namespace portcullis::sso
