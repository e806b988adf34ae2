// The public key a DPoP proof carries in its `jwk` header (RFC 9449 §4.2), and its RFC 7638
// thumbprint, which is what tokens are bound to (`cnf.jkt`).
#pragma once

#include <json/value.h>

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "jose/jws_key.h"

namespace portcullis::dpop {

// The proof algorithms accepted and advertised (dpop_signing_alg_values_supported).
inline constexpr std::array<std::string_view, 3> kProofAlgorithms = {"ES256", "RS256", "EdDSA"};

class ProofKey {
 public:
  // The key `jwk` describes, for signatures made with `alg` (jose::JwsPublicKey::from_jwk):
  // ES256 needs {"kty":"EC","crv":"P-256","x","y"}, RS256 {"kty":"RSA","n","e"} (RsaPublicKey's
  // bounds), EdDSA {"kty":"OKP","crv":"Ed25519","x"}. invalid_argument for any other alg, a kty
  // or crv that does not fit alg, a JWK with private members (d, p, q, dp, dq, qi, oth, k), an
  // alg or use member that contradicts the signature use, or malformed members.
  static Result<ProofKey> from_jwk(const Json::Value& jwk, std::string_view alg);

  // True only when sig is a valid signature of data under this key with its alg.
  bool verify(std::string_view data, std::string_view sig) const { return key_.verify(data, sig); }

  // base64url(SHA-256) of the RFC 7638 canonical JWK: only the required members, in
  // lexicographic order, built from the parsed key (so spellings of one key share a thumbprint).
  const std::string& thumbprint() const { return thumbprint_; }

 private:
  ProofKey(jose::JwsPublicKey key, std::string thumbprint)
      : key_(std::move(key)), thumbprint_(std::move(thumbprint)) {}

  jose::JwsPublicKey key_;
  std::string thumbprint_;
};

// The RFC 7638 thumbprint of canonical JSON members given as (name, value) pairs in lexicographic
// order, base64url-encoded. Exposed for tests that compute expected thumbprints.
std::string jwk_thumbprint(
    std::initializer_list<std::pair<std::string_view, std::string_view>> members);
std::string jwk_thumbprint(const std::vector<std::pair<std::string_view, std::string>>& members);

}  // namespace portcullis::dpop
