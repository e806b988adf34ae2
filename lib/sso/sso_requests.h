// Redirects to an identity provider waiting for the answer (table sso_requests), each bound to
// the browser that started it.
//
// The browser holds a random value in the SSO cookie; the IdP carries a random `state`. Only
// their SHA-256 hashes are stored. The PKCE code verifier and the OIDC nonce are derived from
// both with a key derived from the master key, so neither is stored and neither can be
// recomputed without the browser's cookie: an answer replayed in another browser, or a state
// used twice, matches nothing.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "crypto/aead.h"
#include "store/db.h"

namespace portcullis::sso {

inline constexpr int64_t kSsoRequestLifetimeSeconds = 600;

struct PendingSignIn {
  std::string connection_id;
  std::string login_request_id;
  std::string state;
  std::string code_verifier;
  std::string nonce;
  // False when the state is live but the browser is not the one that started it: then only
  // the ids are filled (for the failure event) and the request stays usable by its browser.
  bool browser_matches = true;
  // SAML: the user the ACS verified (null for OIDC, or when the ACS has not run).
  Json::Value saml_result;
};

// A SAML sign-in waiting at the ACS (which the IdP's cross-site POST reaches without the
// browser's Lax cookie: the browser is checked at the finish that follows).
struct SamlPending {
  std::string connection_id;
  std::string login_request_id;
  std::string request_id;  // the AuthnRequest's ID
};

class SsoRequestStore {
 public:
  SsoRequestStore(store::Db& db, const crypto::MasterKey& master_key)
      : db_(db), master_key_(master_key) {}

  // A new pending sign-in for this browser (browser_secret: the SSO cookie's value).
  Result<PendingSignIn> start(const std::string& connection_id, const std::string& login_request_id,
                              const std::string& browser_secret, int64_t now);
  // Binds a SAML request's ID to a started sign-in (Lasso makes the ID after start()).
  Status set_saml_request_id(const std::string& state, const std::string& request_id);
  // The live, unused SAML sign-in `state` (the RelayState) names, whose ACS has not run yet.
  Result<std::optional<SamlPending>> find_saml(const std::string& state, int64_t now);
  // Stores the ACS's verified user; false when the ACS already ran for this state.
  Result<bool> record_saml_result(const std::string& state, const Json::Value& result);
  // Remembers an assertion id until `expires_at`; false when it was seen before (a replay).
  Result<bool> remember_assertion(const std::string& connection_id, const std::string& assertion_id,
                                  int64_t expires_at);
  // The pending sign-in `state` names, used up; nullopt when it is unknown, expired or already
  // used. Another browser's gets browser_matches false and uses nothing up.
  Result<std::optional<PendingSignIn>> take(const std::string& state,
                                            const std::string& browser_secret, int64_t now);
  static Status prune(store::Db& db, int64_t now);

 private:
  Result<PendingSignIn> derive(PendingSignIn p, const std::string& browser_secret);

  store::Db& db_;
  const crypto::MasterKey& master_key_;
};

}  // namespace portcullis::sso
