// Public keys as JSON Web Keys (RFC 7517, RFC 7518 §6.2, §6.3, RFC 8037 §2): RSA, EC P-256 and
// OKP Ed25519, and JWKS documents of them.
#pragma once

#include <json/json.h>

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "crypto/rsa.h"
#include "jose/jws_key.h"

namespace portcullis::jose {

// Largest JWKS document parse_jwks reads.
inline constexpr size_t kMaxJwksBytes = 256 * 1024;

// {"kty":"RSA","use":"sig","alg":"RS256","kid":kid,"n":...,"e":...} with n and e as base64url
// of their minimal big-endian bytes.
Json::Value public_jwk(const crypto::RsaPublicKey& key, std::string_view kid);

// The bytes of a JWK member holding base64url (n, e, x, y, ...). invalid_argument when it is
// missing, not a string, empty or not strict base64url.
Result<std::string> decode_jwk_member(const Json::Value& jwk, std::string_view name);

// The RS256 verification key a JWK describes. invalid_argument unless: it is an object, kty is
// "RSA", n and e are non-empty strict base64url, alg (if present) is "RS256", use (if present)
// is "sig", it carries no private members (d, p, q, dp, dq, qi, oth), and the key meets
// RsaPublicKey's bounds. Leading zero bytes in n or e are tolerated.
Result<crypto::RsaPublicKey> parse_rsa_jwk(const Json::Value& jwk);

// (kid, key) pairs in document order; kid is "" for a key without one.
using RsaKeySet = std::vector<std::pair<std::string, crypto::RsaPublicKey>>;
using JwsKeySet = std::vector<std::pair<std::string, JwsPublicKey>>;

// The signing keys of a JWKS document for the `accepted` algorithms. A key's algorithm is its
// alg member when present, else what its kty (and crv) implies: RSA → RS256, EC P-256 → ES256,
// OKP Ed25519 → EdDSA. Keys meant for something else are skipped: another kty or curve, a use
// other than "sig", an alg that does not fit the key or is not accepted. Every other key must
// pass JwsPublicKey::from_jwk, carry a string kid if any, and not repeat another key's kid;
// otherwise the whole set is refused with invalid_argument, since a half-read key set hides
// mistakes.
Result<JwsKeySet> parse_jws_jwks(std::string_view text,
                                 std::span<const JwsAlg> accepted = kAccessTokenAlgs);

// The RS256 keys of a JWKS document ({"keys":[...]}): parse_jws_jwks accepting RS256 only (for
// identity providers' ID tokens, which Portcullis verifies as RS256).
Result<RsaKeySet> parse_jwks(std::string_view text);

}  // namespace portcullis::jose
