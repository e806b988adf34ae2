// The JWS algorithms Portcullis signs access tokens with, and their keys (RFC 7518 §3.3, §3.4,
// RFC 8037 §3.1): RS256 (RSA-2048, the default), ES256 (ECDSA P-256) and EdDSA (Ed25519), chosen
// per resource. A key has exactly one algorithm: a verifier takes the algorithm from the key a
// token's kid names and refuses a token whose header says otherwise (RFC 8725 §3.1, §2.1), so
// "none", HS256 and an RSA key "verifying" an ES256 header are all refused.
#pragma once

#include <json/value.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/status.h"
#include "crypto/ec.h"
#include "crypto/rsa.h"

namespace portcullis::jose {

enum class JwsAlg { kRS256, kES256, kEdDSA };

// Every algorithm an access token may be signed with, in the order keys are created.
inline constexpr std::array<JwsAlg, 3> kAccessTokenAlgs = {JwsAlg::kRS256, JwsAlg::kES256,
                                                           JwsAlg::kEdDSA};

// "RS256", "ES256", "EdDSA".
std::string_view alg_name(JwsAlg alg);
// The algorithm a JOSE alg value names, byte-exact; nullopt for every other value ("none",
// "HS256", "es256", ...).
std::optional<JwsAlg> alg_from_name(std::string_view name);

// A public key with its algorithm.
class JwsPublicKey {
 public:
  using Key = std::variant<crypto::RsaPublicKey, crypto::P256PublicKey, crypto::Ed25519PublicKey>;
  explicit JwsPublicKey(Key key) : key_(std::move(key)) {}

  // The key a JWK describes for signatures with `alg`: RS256 needs {"kty":"RSA","n","e"}
  // (RsaPublicKey's bounds), ES256 {"kty":"EC","crv":"P-256","x","y"}, EdDSA {"kty":"OKP",
  // "crv":"Ed25519","x"}. invalid_argument when it is not an object, kty or crv does not fit
  // alg, an alg member names another algorithm, use is present and not "sig", it carries
  // private members (d, p, q, dp, dq, qi, oth, k) or a member is malformed.
  static Result<JwsPublicKey> from_jwk(const Json::Value& jwk, JwsAlg alg);

  JwsAlg alg() const;
  // True only when sig is a valid JWS signature of data under this key with its algorithm.
  bool verify(std::string_view data, std::string_view sig) const;

  // The RFC 7638 required members (kty, crv, coordinates or n/e) in lexicographic order, each
  // value as its JSON string holds it (base64url of the minimal bytes for n and e).
  std::vector<std::pair<std::string_view, std::string>> required_members() const;
  // The published form: the required members plus "use":"sig", "alg" and "kid".
  Json::Value jwk(std::string_view kid) const;

  // The RSA key, for callers that accept RS256 only; nullptr for the other algorithms.
  const crypto::RsaPublicKey* rsa() const { return std::get_if<crypto::RsaPublicKey>(&key_); }
  // The key itself, moved out.
  Key take() && { return std::move(key_); }

 private:
  Key key_;
};

// A private signing key with its algorithm. Storage form: unencrypted PKCS#8 DER, sealed by the
// caller (lib/keys) with the master key.
class JwsPrivateKey {
 public:
  using Key =
      std::variant<crypto::RsaPrivateKey, crypto::P256PrivateKey, crypto::Ed25519PrivateKey>;
  explicit JwsPrivateKey(Key key) : key_(std::move(key)) {}

  // A fresh key: RSA-2048, P-256 or Ed25519.
  static Result<JwsPrivateKey> generate(JwsAlg alg);
  // invalid_argument when der is not a PKCS#8 key of the type alg needs.
  static Result<JwsPrivateKey> from_pkcs8_der(JwsAlg alg, std::string_view der);
  Result<std::string> to_pkcs8_der() const;

  JwsAlg alg() const;
  // The raw JWS signature (RSA: as long as the modulus; ES256: r || s; EdDSA: 64 bytes).
  Result<std::string> sign(std::string_view data) const;
  size_t signature_bytes() const;
  Result<JwsPublicKey> public_key() const;

 private:
  Key key_;
};

}  // namespace portcullis::jose
