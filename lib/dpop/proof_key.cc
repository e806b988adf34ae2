#include "dpop/proof_key.h"

#include "crypto/base64.h"
#include "crypto/hash.h"
#include "format/json.h"
#include "jose/jwk.h"

namespace portcullis::dpop {
namespace {

bool member_is(const Json::Value& jwk, std::string_view name, std::string_view expected) {
  const Json::Value* member = json::find_member(jwk, name);
  return member != nullptr && member->isString() && member->asString() == expected;
}

Status check_public_only(const Json::Value& jwk) {
  // A proof that publishes its private key proves nothing; refusing it also tells its author.
  for (const char* name : {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}) {
    if (json::find_member(jwk, name) != nullptr) {
      return Status::invalid_argument("jwk contains private key material");
    }
  }
  if (const Json::Value* use = json::find_member(jwk, "use");
      use && !member_is(jwk, "use", "sig")) {
    return Status::invalid_argument("jwk use must be \"sig\" when present");
  }
  return Status::ok();
}

}  // namespace

std::string jwk_thumbprint(
    std::initializer_list<std::pair<std::string_view, std::string_view>> members) {
  // Every value is a fixed name or base64url, so no JSON escaping is ever needed.
  std::string canonical = "{";
  for (const auto& [name, value] : members) {
    if (canonical.size() > 1) canonical += ',';
    canonical += '"';
    canonical += name;
    canonical += "\":\"";
    canonical += value;
    canonical += '"';
  }
  canonical += '}';
  return crypto::base64url_encode(crypto::sha256(canonical));
}

Result<ProofKey> ProofKey::from_jwk(const Json::Value& jwk, std::string_view alg) {
  if (!jwk.isObject()) return Status::invalid_argument("jwk must be a JSON object");
  PORTCULLIS_RETURN_IF_ERROR(check_public_only(jwk));
  if (const Json::Value* jwk_alg = json::find_member(jwk, "alg");
      jwk_alg && !member_is(jwk, "alg", alg)) {
    return Status::invalid_argument("jwk alg differs from the proof's alg");
  }
  if (alg == "ES256") {
    if (!member_is(jwk, "kty", "EC") || !member_is(jwk, "crv", "P-256")) {
      return Status::invalid_argument("ES256 needs an EC P-256 jwk");
    }
    PORTCULLIS_ASSIGN_OR_RETURN(std::string x, jose::decode_jwk_member(jwk, "x"));
    PORTCULLIS_ASSIGN_OR_RETURN(std::string y, jose::decode_jwk_member(jwk, "y"));
    PORTCULLIS_ASSIGN_OR_RETURN(crypto::P256PublicKey key,
                                crypto::P256PublicKey::from_coordinates(x, y));
    return ProofKey(std::move(key), jwk_thumbprint({{"crv", "P-256"},
                                                    {"kty", "EC"},
                                                    {"x", crypto::base64url_encode(x)},
                                                    {"y", crypto::base64url_encode(y)}}));
  }
  if (alg == "RS256") {
    if (!member_is(jwk, "kty", "RSA")) return Status::invalid_argument("RS256 needs an RSA jwk");
    PORTCULLIS_ASSIGN_OR_RETURN(std::string n, jose::decode_jwk_member(jwk, "n"));
    PORTCULLIS_ASSIGN_OR_RETURN(std::string e, jose::decode_jwk_member(jwk, "e"));
    PORTCULLIS_ASSIGN_OR_RETURN(crypto::RsaPublicKey key,
                                crypto::RsaPublicKey::from_components(n, e));
    // From the parsed key: leading zero bytes a client added do not change the thumbprint.
    std::string thumbprint = jwk_thumbprint({{"e", crypto::base64url_encode(key.e())},
                                             {"kty", "RSA"},
                                             {"n", crypto::base64url_encode(key.n())}});
    return ProofKey(std::move(key), std::move(thumbprint));
  }
  if (alg == "EdDSA") {
    if (!member_is(jwk, "kty", "OKP") || !member_is(jwk, "crv", "Ed25519")) {
      return Status::invalid_argument("EdDSA needs an OKP Ed25519 jwk");
    }
    PORTCULLIS_ASSIGN_OR_RETURN(std::string x, jose::decode_jwk_member(jwk, "x"));
    PORTCULLIS_ASSIGN_OR_RETURN(crypto::Ed25519PublicKey key,
                                crypto::Ed25519PublicKey::from_bytes(x));
    return ProofKey(
        std::move(key),
        jwk_thumbprint({{"crv", "Ed25519"}, {"kty", "OKP"}, {"x", crypto::base64url_encode(x)}}));
  }
  return Status::invalid_argument("alg is not one of ES256, RS256, EdDSA");
}

bool ProofKey::verify(std::string_view data, std::string_view sig) const {
  struct Verifier {
    std::string_view data, sig;
    bool operator()(const crypto::P256PublicKey& k) const { return k.verify_es256(data, sig); }
    bool operator()(const crypto::RsaPublicKey& k) const { return k.verify_rs256(data, sig); }
    bool operator()(const crypto::Ed25519PublicKey& k) const { return k.verify_eddsa(data, sig); }
  };
  return std::visit(Verifier{data, sig}, key_);
}

}  // namespace portcullis::dpop
