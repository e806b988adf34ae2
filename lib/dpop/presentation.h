// The resource-server half of DPoP (RFC 9449 §7): whether an access token that already passed
// its signature and claim checks was presented the way its binding demands. Shared by the
// validation library (lib/validation, the nginx validator) and the management API.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "dpop/proof.h"

namespace portcullis::dpop {

struct Presentation {
  bool dpop_scheme = false;               // `Authorization: DPoP <token>` rather than Bearer
  std::string_view access_token;          // the token as presented (ath is its hash)
  std::optional<std::string_view> proof;  // the DPoP header, nullopt when absent
  std::string_view method;                // of the request the token came with
  std::string_view url;                   // the absolute URL the client addressed (htu)
  int64_t now = 0;
  int64_t iat_leeway_seconds = kDefaultIatLeewaySeconds;
};

// Records a verified proof's jti, refusing a replay (ReplayCache::remember, or a test double).
using RememberProof = std::function<Status(const VerifiedProof&)>;

// The key thumbprint a token is bound to (claims' cnf.jkt), "" for an unbound token.
std::string bound_key(const Json::Value& claims);

// Ok when an unbound token (cnf_jkt empty) came as Bearer, or a bound one came with the DPoP
// scheme and a proof that passes verify_proof for this request (ath included), was made with
// the key cnf_jkt names, and `remember` accepts as unused. Otherwise Unauthenticated with
// reason invalid_token (a bound token sent as Bearer, an unbound one sent as DPoP) or
// invalid_dpop_proof (no proof, a bad one, another key, a replay). A failure of `remember`
// other than a replay (the store is down) is returned as it is: the proof is not accepted.
Status check_presentation(std::string_view cnf_jkt, const Presentation& presentation,
                          const RememberProof& remember);

// RFC 9449 §7.1: the auth-params of a DPoP challenge, `algs="ES256 RS256 EdDSA"`.
std::string supported_algs_param();

}  // namespace portcullis::dpop
