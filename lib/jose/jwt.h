// Compact JWS (RFC 7515) signed with RS256, ES256 or EdDSA (jose/jws_key.h).
//
// Decoding is strict and bounded so hostile tokens cost little and confuse nothing: the
// algorithms a caller accepts are fixed by the caller, and the one that verifies a token is the
// algorithm of the key its kid names, never the token's own choice (RFC 8725 §3.1): "none",
// HMAC, any other alg, and a header alg that differs from the key's are refused.
#pragma once

#include <json/json.h>

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"
#include "crypto/rsa.h"
#include "jose/jws_key.h"

namespace portcullis::jose {

// Longest token decode_jwt reads, and longest sign_jwt produces.
inline constexpr size_t kMaxJwtBytes = 16 * 1024;

// header.payload.signature with header exactly {"alg":"RS256","typ":typ,"kid":kid} and the
// claims as compact JSON. invalid_argument when claims is not an object, typ or kid is empty,
// or the token would exceed kMaxJwtBytes; internal when signing fails.
Result<std::string> sign_jwt(const Json::Value& claims, std::string_view typ, std::string_view kid,
                             const crypto::RsaPrivateKey& key);
// The same with the key's algorithm in the header: {"alg":<key's alg>,"typ":typ,"kid":kid}.
Result<std::string> sign_jwt(const Json::Value& claims, std::string_view typ, std::string_view kid,
                             const JwsPrivateKey& key);

struct DecodedJwt {
  Json::Value header;           // a JSON object
  Json::Value claims;           // a JSON object
  std::string signing_input;    // the first two segments with their dot, as signed
  std::string signature;        // raw bytes
  JwsAlg alg = JwsAlg::kRS256;  // the header's alg (one the caller accepted)
};

// Parses a token without checking its signature: only verify_jwt's result may be trusted.
// unauthenticated unless the token is at most kMaxJwtBytes, has exactly three non-empty
// segments of strict base64url, header and claims are JSON objects accepted by
// parse_strict_json (so no duplicate keys), the header's alg is the string "RS256", it has no
// crit member, and typ and kid, when present, are strings. Header members that point at keys
// (jku, jwk, x5u, x5c) are ignored: keys come only from the caller.
Result<DecodedJwt> decode_jwt(std::string_view token);

// decode_jwt for tokens whose header alg may be any of `accepted` (else unauthenticated).
Result<DecodedJwt> decode_jws(std::string_view token,
                              std::span<const JwsAlg> accepted = kAccessTokenAlgs);

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

// The key for a kid with its algorithm, or nullptr.
using JwsKeyForKid = std::function<const JwsPublicKey*(std::string_view kid)>;

// decode_jws (RS256, ES256 or EdDSA), then the signature under the key the kid names, with that
// key's algorithm: unauthenticated as verify_jwt, and also when the header's alg is not the
// key's (an ES256 header on an RSA key's kid, say), so no token chooses how it is checked.
Result<DecodedJwt> verify_jws(std::string_view token, const JwsKeyForKid& key_for_kid);

}  // namespace portcullis::jose
