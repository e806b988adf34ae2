// The user grants of the token endpoint (contract §4): authorization_code with PKCE and
// code-replay revocation, and refresh_token with rotation and reuse detection. Also the client
// authentication they share with revocation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "http/request.h"
#include "oauth/access_token.h"
#include "oauth/client_auth.h"
#include "oauth/client_info.h"
#include "server/app.h"

namespace portcullis::oauth {

// Where authenticate_client looks the client up. kWorkerCache (client_cache.h) is for the
// refresh grant only, where a deleted client's grants are revoked and the grant is read from
// the store anyway; everything else reads the store.
enum class ClientLookup { kStore, kWorkerCache };

// Resolves the client and checks its credentials against how it registered: a confidential
// client must present its secret (Basic or post), a public one must present none. Failures are
// Unauthenticated with reason invalid_client (the endpoint answers 401).
Result<ClientInfo> authenticate_client(server::Services& services,
                                       const ClientCredentials& credentials, int64_t now,
                                       ClientLookup lookup = ClientLookup::kStore);

struct UserTokens {
  AccessToken access_token;
  std::string scope;
  std::optional<std::string> refresh_token;
  std::string grant_id;
  std::string user_id;
  std::string resource_id;
};

// REQUIRES: `client` authenticated. Errors carry the OAuth error as reason (invalid_grant,
// invalid_request, invalid_target, invalid_scope). Records token.issued (and, on a replayed
// code, token.revoked) on ctx.events.
Result<UserTokens> redeem_authorization_code(server::Context& ctx, const ClientInfo& client,
                                             const http::Form& form, int64_t now);
// Records token.refreshed, or token.refresh_reuse_detected when a rotated-out token comes back.
Result<UserTokens> redeem_refresh_token(server::Context& ctx, const ClientInfo& client,
                                        const http::Form& form, int64_t now);

}  // namespace portcullis::oauth
