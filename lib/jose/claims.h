// Claim checks for a token whose signature verify_jwt has accepted (RFC 7519 §4.1, RFC 9068,
// RFC 8725 §3.11). Every rule that fails yields its own message; no message quotes the token.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "jose/jwt.h"

namespace portcullis::jose {

// RFC 7515 §4.1.9: whether a typ header names the media type `expected` (case-insensitive,
// "application/" implied when there is no '/').
bool typ_names(std::string_view typ, std::string_view expected);

// A NumericDate as whole seconds (fractions rounded down, or up when round_up), or nullopt when
// it is not a finite JSON number. Values beyond the int64 range saturate.
std::optional<int64_t> numeric_date(const Json::Value& value, bool round_up);

// a + b, clamped to the int64 range: arithmetic on NumericDates taken from hostile tokens.
int64_t saturating_add(int64_t a, int64_t b);

struct ClaimChecks {
  std::string issuer;           // iss must equal this byte for byte
  std::string audience;         // aud must be this string or an array containing it
  std::string typ;              // the typ header, e.g. "at+jwt"
  int64_t now = 0;              // seconds since the epoch
  int64_t leeway_seconds = 60;  // tolerated clock skew, applied to exp, nbf and iat
};

// Ok when all of these hold, else unauthenticated naming the first rule that failed:
//  - the typ header is present and names the same media type as checks.typ: compared
//    case-insensitively, with "application/" implied when there is no '/' (RFC 7515 §4.1.9);
//  - iss equals checks.issuer;
//  - aud is checks.audience or an array of strings containing it;
//  - exp is present and now < exp + leeway;
//  - nbf and iat, when present, are at most now + leeway.
// Times are JSON numbers (NumericDate); fractions are rounded towards rejection.
// invalid_argument when checks has an empty issuer, audience or typ, or a negative leeway.
Status check_claims(const DecodedJwt& jwt, const ClaimChecks& checks);

}  // namespace portcullis::jose
