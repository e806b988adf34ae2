// The client_credentials grant (contract §4): management API clients only, at the environment
// issuer. The token's audience is `{base_url}/api`; its scope is the client's management scopes,
// or the subset the request names.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "core/status.h"
#include "keys/key_ring.h"
#include "oauth/access_token.h"
#include "oauth/client_auth.h"
#include "store/db.h"

namespace portcullis::oauth {

struct IssuedToken {
  AccessToken token;
  std::string scope;
  std::string client_id;
};

// Errors carry the OAuth error as reason: invalid_client (unknown client, wrong secret, no
// secret), invalid_scope (a scope the client was not granted). A non-empty `dpop_jkt` (the key
// of the request's verified DPoP proof) binds the token to that key (cnf.jkt, RFC 9449).
Result<IssuedToken> grant_client_credentials(store::Db& db, const keys::KeyRing& keys,
                                             const config::Config& config,
                                             const ClientCredentials& credentials,
                                             const std::optional<std::string>& requested_scope,
                                             int64_t now, const std::string& dpop_jkt);

// `{base_url}/api`: the audience of every management token.
std::string management_audience(const config::Config& config);

}  // namespace portcullis::oauth
