// Compact JWS (RFC 7515) signed with RS256, the only algorithm this server issues or accepts.
//
// Decoding is strict and bounded so hostile tokens cost little and confuse nothing: the
// algorithm is fixed rather than read from the token (RFC 8725 §3.1), so "none", HMAC and every
// other alg are refused before any key is chosen.
#pragma once

#include <json/json.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "crypto/rsa.h"

namespace portcullis::jose {

// Longest token decode_jwt reads, and longest sign_jwt produces.
inline constexpr size_t kMaxJwtBytes = 16 * 1024;

// header.payload.signature with header exactly {"alg":"RS256","typ":typ,"kid":kid} and the
// claims as compact JSON. invalid_argument when claims is not an object, typ or kid is empty,
// or the token would exceed kMaxJwtBytes; internal when signing fails.
Result<std::string> sign_jwt(const Json::Value& claims, std::string_view typ, std::string_view kid,
                             const crypto::RsaPrivateKey& key);

struct DecodedJwt {
  Json::Value header;         // a JSON object
  Json::Value claims;         // a JSON object
  std::string signing_input;  // the first two segments with their dot, as signed
  std::string signature;      // raw bytes
};

// Parses a token without checking its signature: only verify_jwt's result may be trusted.
// unauthenticated unless the token is at most kMaxJwtBytes, has exactly three non-empty
// segments of strict base64url, header and claims are JSON objects accepted by
// parse_strict_json (so no duplicate keys), the header's alg is the string "RS256", it has no
// crit member, and typ and kid, when present, are strings. Header members that point at keys
// (jku, jwk, x5u, x5c) are ignored: keys come only from the caller.
Result<DecodedJwt> decode_jwt(std::string_view token);

// The structural half of decode_jwt for JWS types whose header rules differ from access
// tokens' (DPoP proofs choose their own alg and carry their key): the same size, segment,
// base64url and JSON-object rules, but alg, crit, typ and kid are left to the caller.
Result<DecodedJwt> decode_compact_jws(std::string_view token);

// Returns the verification key for a kid, or nullptr when there is none. The pointer need only
// stay valid until verify_jwt returns.
using KeyForKid = std::function<const crypto::RsaPublicKey*(std::string_view kid)>;

// decode_jwt, then checks the signature with the key key_for_kid names for the header's kid.
// unauthenticated when decoding fails, kid is missing or empty, no key has that kid, or the
// signature does not verify; invalid_argument when key_for_kid is empty. Claims are not
// checked: use check_claims (jose/claims.h) on the result.
Result<DecodedJwt> verify_jwt(std::string_view token, const KeyForKid& key_for_kid);

}  // namespace portcullis::jose
