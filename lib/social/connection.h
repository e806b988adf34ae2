// Social connections (contract §7, §10): an identity provider of the whole environment that
// offers "Continue with …" on the login page. `provider` is a preset (google, microsoft, github)
// or generic (oidc: discovery from `issuer`; oauth2: the three endpoint URLs and a claim
// mapping). A preset fills what its provider publishes; each of its URLs may be overridden (a
// staging tenant, a local test double). The client secret is sealed (connection_store.h) and
// never returned.
#pragma once

#include <json/value.h>

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace portcullis::social {

// Which claims of the ID token or userinfo answer give the user (oauth2; OIDC uses the
// standard claims unless overridden).
struct ClaimMapping {
  std::string subject = "sub";
  std::string email = "email";
  std::string email_verified = "email_verified";
  std::string given_name = "given_name";
  std::string family_name = "family_name";
};

struct SocialConnection {
  std::string id;        // soc_…
  std::string provider;  // google | microsoft | github | oidc | oauth2
  std::string name;      // "Google": the button says "Continue with <name>"
  bool enabled = true;
  std::string client_id;
  std::vector<std::string> scopes;
  // OIDC kinds (google, microsoft, oidc): discovery from the issuer.
  std::string issuer;
  // OAuth 2.0 kinds (github, oauth2).
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string userinfo_endpoint;
  std::string emails_endpoint;  // github: /user/emails
  // How the code is redeemed (OAuth 2.0 kinds): client_secret_post (the default, what GitHub
  // takes) or client_secret_basic (RFC 6749 §2.3.1, which every server must support).
  std::string token_endpoint_auth_method;
  ClaimMapping mapping;
  bool has_client_secret = false;
  std::string create_time;  // RFC 3339
  std::string update_time;  // RFC 3339

  // OpenID Connect (ID token, nonce) rather than plain OAuth 2.0.
  bool is_oidc() const {
    return provider == "google" || provider == "microsoft" || provider == "oidc";
  }
};

// The realm of the provider's subject identifiers (user_identities.realm): the issuer for a
// generic OIDC provider, the preset's name, the connection for a generic OAuth 2.0 provider.
std::string identity_realm(const SocialConnection& c);

// A create (`patch` false) or PATCH body applied to `c`; a create fills the preset's defaults
// first. The secret, when the body holds one, goes to `client_secret`. InvalidArgument for an
// unknown field, a wrong type, a bad URL, or a create missing what its provider needs.
Status apply_body(const Json::Value& body, bool patch, SocialConnection& c,
                  std::optional<std::string>& client_secret);

Json::Value config_json(const SocialConnection& c);
void read_config(const Json::Value& config, SocialConnection& c);
// What the API answers (never the secret), with the redirect URI to register at the provider.
Json::Value to_json(const SocialConnection& c, const std::string& base_url);

}  // namespace portcullis::social
