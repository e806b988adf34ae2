// The client_credentials grant (contract §4): management API clients only, at the environment
// issuer. The token's audience is `{base_url}/api`; its scope is the client's management scopes,
// or the subset the request names.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "core/status.h"
#include "keys/key_ring.h"
#include "management/api_clients.h"
#include "tokens/access_token.h"

namespace portcullis::oauth {

struct IssuedToken {
  AccessToken token;
  std::string scope;
  std::string client_id;
};

// REQUIRES: `client` authenticated (authenticate_client_credentials_caller, client_auth.h).
// Errors carry the OAuth error as reason: invalid_scope (a scope the client was not granted). A
// non-empty `dpop_jkt` (the key of the request's verified DPoP proof) binds the token to that key
// (cnf.jkt, RFC 9449).
Result<IssuedToken> grant_client_credentials(const keys::KeyRing& keys,
                                             const config::Config& config,
                                             const management::ApiClient& client,
                                             const std::optional<std::string>& requested_scope,
                                             int64_t now, const std::string& dpop_jkt);

}  // namespace portcullis::oauth
