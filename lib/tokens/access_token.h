// RFC 9068 JWT access tokens: header {"alg":"RS256"|"ES256"|"EdDSA","typ":"at+jwt","kid"},
// claims iss, sub, aud (one string), client_id, scope, iat, nbf, exp, jti, and auth_time /
// org_id when known, and cnf.jkt for a DPoP-bound token (RFC 9449 §6). Signed with the key ring's
// current signer of the requested algorithm (the resource's access_token_signing_alg).
//
// The jti of a token issued under a grant is "<grant id>.<random>": whoever checks the deny-list
// (introspection, the validator) finds the grant from the token alone, so revoking a grant
// reaches its live access tokens without a stored row per token (grants.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "keys/key_ring.h"
#include "store/db.h"

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
  std::string grant_id;  // empty for tokens of no grant (management tokens)
  std::string dpop_jkt;  // non-empty: the token is bound to this key thumbprint (cnf.jkt)
  jose::JwsAlg alg = jose::JwsAlg::kRS256;
};

struct AccessToken {
  std::string jwt;
  std::string jti;
  int64_t issued_at = 0;
  int64_t expires_at = 0;
};

// The grant a jti names (a view into `jti`); nullopt for a jti of no grant (or one issued
// before jtis named grants).
std::optional<std::string_view> grant_of_jti(std::string_view jti);

// Unavailable when the ring has no signer of the algorithm yet (fresh store, or it could not be
// loaded, or no key of that algorithm was created: `portcullis keys rotate` or bootstrap).
Result<AccessToken> mint_access_token(const keys::KeyRing& keys, const AccessTokenRequest& request,
                                      int64_t now);

// A signer a node needs to answer every token request: RS256 (management tokens, and resources
// that keep the default) and the access_token_signing_alg of every resource.
struct RequiredSigner {
  jose::JwsAlg alg = jose::JwsAlg::kRS256;
  int64_t resources = 0;               // resources whose tokens this algorithm signs
  const keys::LiveKey* key = nullptr;  // the ring's signer at `now`; nullptr: missing
};
// The required signers in jose::kAccessTokenAlgs order, each with the ring's key at `now`
// (/readyz and `portcullis doctor` check that none is missing).
Result<std::vector<RequiredSigner>> required_signers(store::Db& db, const keys::KeyRing& ring,
                                                     int64_t now);

}  // namespace portcullis::oauth
