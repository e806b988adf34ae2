// RFC 9068 JWT access tokens (contract §4): header {"alg":"RS256","typ":"at+jwt","kid"},
// claims iss, sub, aud (one string), client_id, scope, iat, nbf, exp, jti, and auth_time /
// org_id when known, and cnf.jkt for a DPoP-bound token (RFC 9449 §6). Signed with the key ring's
// current signer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "keys/key_ring.h"

namespace portcullis::oauth {

struct AccessTokenRequest {
  std::string issuer;
  std::string subject;
  std::string audience;
  std::string client_id;
  std::string scope;  // space-separated
  int64_t lifetime_seconds = 900;
  std::optional<int64_t> auth_time;
  std::string organization_id;
  std::string dpop_jkt;  // non-empty: the token is bound to this key thumbprint (cnf.jkt)
};

struct AccessToken {
  std::string jwt;
  std::string jti;
  int64_t issued_at = 0;
  int64_t expires_at = 0;
};

// Unavailable when the ring has no signer yet (fresh store, or it could not be loaded).
Result<AccessToken> mint_access_token(const keys::KeyRing& keys, const AccessTokenRequest& request,
                                      int64_t now);

}  // namespace portcullis::oauth
