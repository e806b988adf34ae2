// The user grants of the token endpoint (contract §4): authorization_code with PKCE and
// code-replay revocation, and refresh_token with rotation and reuse detection. The client is
// authenticated before (client_auth.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "clients/client_info.h"
#include "http/request.h"
#include "oauth/client_auth.h"
#include "server/app.h"
#include "tokens/access_token.h"

namespace portcullis::oauth {

struct UserTokens {
  AccessToken access_token;
  std::string scope;
  std::optional<std::string> refresh_token;
  std::string grant_id;
  std::string user_id;
  std::string resource_id;
};

// DPoP (RFC 9449): `dpop_jkt` is the thumbprint of the key of the request's verified DPoP proof,
// or "" when it sent none. A non-empty one binds the access token (cnf.jkt) and, for public
// clients, the grant's refresh tokens; a bound grant or code refreshes or redeems only with a
// proof made with its key (invalid_grant otherwise).
//
// REQUIRES: `client` authenticated. Errors carry the OAuth error as reason (invalid_grant,
// invalid_request, invalid_target, invalid_scope). Records token.issued (and, on a replayed
// code, token.revoked) on ctx.events.
//
// `exchange` is the client with the form's `code` as read with it
// (authenticate_client_with_code, client_auth.h): a replay (the code's grant exists) revokes that
// grant, whatever else is wrong with the code.
Result<UserTokens> redeem_authorization_code(server::Context& ctx,
                                             const AuthenticatedWithCode& exchange,
                                             const http::Form& form, int64_t now,
                                             const std::string& dpop_jkt);
// The same exchange with nothing read first, in one statement: `client` as this worker knows it
// (authenticate_client_from_worker_cache, client_auth.h), `code` the form's code as open_code
// opened it (the same value authenticate_client_with_code is given after) checked in memory,
// its resource from this worker's copy (clients/resource_cache.h), and one CALL whose INSERT
// checks the code's single use, its user, client and resource itself
// (sql/0096_code_exchange_one_statement.sql). nullopt when that does not decide it: a refusal
// of any kind, a resource this worker does not find, or a write that inserted nothing; then
// authenticate_client_with_code and redeem_authorization_code decide on what the store holds.
// Otherwise the tokens, or a failure that is no refusal (the store unavailable, signing).
std::optional<Result<UserTokens>> redeem_authorization_code_alone(
    server::Context& ctx, const ClientInfo& client, const std::optional<SealedCode>& code,
    const http::Form& form, int64_t now, const std::string& dpop_jkt);
// Records token.refreshed, or token.refresh_reuse_detected when a rotated-out token comes back.
Result<UserTokens> redeem_refresh_token(server::Context& ctx, const ClientInfo& client,
                                        const http::Form& form, int64_t now,
                                        const std::string& dpop_jkt);

}  // namespace portcullis::oauth
