// SSO connections (contract §7): an organization's SAML 2.0 or OIDC identity provider.
//
// A connection is created as a draft, becomes active only after its configuration tests valid
// (connection_check.h), and can be set inactive. Everything but the OIDC client secret is kept
// as a JSON document; the secret is sealed with the master key (connection_store.h) and never
// returned by the API.
#pragma once

#include <json/value.h>

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "sso/sp_keys.h"

namespace portcullis::sso {

// Which assertion/claim names give a user's e-mail and names.
struct AttributeMapping {
  std::string email;
  std::string given_name;
  std::string family_name;
  // The claim / attribute holding the IdP's immutable user id, matched against the externalId of
  // the organization's SCIM users; empty = the subject (OIDC sub, SAML NameID).
  std::string external_id;
};

struct Connection {
  std::string id;  // conn_…
  std::string organization_id;
  std::string type;  // "saml" | "oidc"
  std::string name;
  std::string state = "draft";  // draft | active | inactive
  AttributeMapping mapping;

  // OIDC
  std::string issuer;
  std::string client_id;
  std::vector<std::string> scopes;
  bool has_client_secret = false;

  // SAML
  std::string idp_metadata_xml;
  std::string idp_metadata_url;
  std::string idp_entity_id;
  std::string idp_sso_url;
  std::vector<std::string> idp_certificates;  // PEM
  // IdP-initiated login (an unsolicited Response at the ACS): off unless enabled.
  bool idp_initiated_login_enabled = false;
  // Sign every AuthnRequest, even when the IdP's metadata does not say WantAuthnRequestsSigned
  // (it is signed then anyway).
  bool sign_authn_requests = false;
  // The SP's own certificates (sp_keys.h): made with the connection, stored beside the
  // configuration, never set through the API.
  SpCertificates sp_certificates;

  std::string create_time;  // RFC 3339
  std::string update_time;  // RFC 3339
};

// The default mapping of a type: OIDC standard claims; for SAML the names the big IdPs send
// (docs/sso.md), the e-mail falling back to the NameID.
AttributeMapping default_mapping(const std::string& type);

// A create (`patch` false) or PATCH body applied to `c`. The client secret, when the body holds
// one, goes to `client_secret` (it is never part of the Connection). InvalidArgument for an
// unknown field, a wrong type, a bad URL or value, or a create missing what its type needs.
Status apply_body(const Json::Value& body, bool patch, Connection& c,
                  std::optional<std::string>& client_secret);

// The non-secret configuration as stored, and back.
Json::Value config_json(const Connection& c);
void read_config(const Json::Value& config, Connection& c);

// What the API answers (the secret never): for SAML also sp_entity_id, sp_acs_url and
// sp_metadata_url under base_url.
Json::Value to_json(const Connection& c, const std::string& base_url);

// FailedPrecondition naming what is missing when the connection cannot be activated as it is
// (before any network check).
Status check_complete(const Connection& c);

}  // namespace portcullis::sso
