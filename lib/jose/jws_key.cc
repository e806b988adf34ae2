#include "jose/jws_key.h"

#include "crypto/base64.h"
#include "format/json.h"
#include "jose/jwk.h"

namespace portcullis::jose {
namespace {

bool member_is(const Json::Value& jwk, std::string_view name, std::string_view expected) {
  const Json::Value* member = json::find_member(jwk, name);
  return member != nullptr && member->isString() && member->asString() == expected;
}

// Overloaded lambdas for std::visit.
template <typename... F>
struct Visitor : F... {
  using F::operator()...;
};
template <typename... F>
Visitor(F...) -> Visitor<F...>;

}  // namespace

std::string_view alg_name(JwsAlg alg) {
  switch (alg) {
    case JwsAlg::kRS256:
      return "RS256";
    case JwsAlg::kES256:
      return "ES256";
    case JwsAlg::kEdDSA:
      return "EdDSA";
  }
  return "RS256";
}

std::optional<JwsAlg> alg_from_name(std::string_view name) {
  for (JwsAlg alg : kAccessTokenAlgs) {
    if (alg_name(alg) == name) return alg;
  }
  return std::nullopt;
}

Result<JwsPublicKey> JwsPublicKey::from_jwk(const Json::Value& jwk, JwsAlg alg) {
  if (!jwk.isObject()) return Status::invalid_argument("JWK must be a JSON object");
  // A published private key is compromised; accepting it would hide that from its owner.
  for (const char* name : {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}) {
    if (json::find_member(jwk, name) != nullptr) {
      return Status::invalid_argument("JWK contains private key material");
    }
  }
  if (json::find_member(jwk, "use") != nullptr && !member_is(jwk, "use", "sig")) {
    return Status::invalid_argument("JWK use must be \"sig\" when present");
  }
  const std::string_view name = alg_name(alg);
  if (json::find_member(jwk, "alg") != nullptr && !member_is(jwk, "alg", name)) {
    return Status::invalid_argument("JWK alg must be \"" + std::string(name) + "\" when present");
  }
  switch (alg) {
    case JwsAlg::kRS256: {
      if (!member_is(jwk, "kty", "RSA")) return Status::invalid_argument("JWK kty must be \"RSA\"");
      PORTCULLIS_ASSIGN_OR_RETURN(std::string n, decode_jwk_member(jwk, "n"));
      PORTCULLIS_ASSIGN_OR_RETURN(std::string e, decode_jwk_member(jwk, "e"));
      PORTCULLIS_ASSIGN_OR_RETURN(crypto::RsaPublicKey key,
                                  crypto::RsaPublicKey::from_components(n, e));
      return JwsPublicKey(std::move(key));
    }
    case JwsAlg::kES256: {
      if (!member_is(jwk, "kty", "EC") || !member_is(jwk, "crv", "P-256")) {
        return Status::invalid_argument("ES256 needs an EC P-256 jwk");
      }
      PORTCULLIS_ASSIGN_OR_RETURN(std::string x, decode_jwk_member(jwk, "x"));
      PORTCULLIS_ASSIGN_OR_RETURN(std::string y, decode_jwk_member(jwk, "y"));
      PORTCULLIS_ASSIGN_OR_RETURN(crypto::P256PublicKey key,
                                  crypto::P256PublicKey::from_coordinates(x, y));
      return JwsPublicKey(std::move(key));
    }
    case JwsAlg::kEdDSA: {
      if (!member_is(jwk, "kty", "OKP") || !member_is(jwk, "crv", "Ed25519")) {
        return Status::invalid_argument("EdDSA needs an OKP Ed25519 jwk");
      }
      PORTCULLIS_ASSIGN_OR_RETURN(std::string x, decode_jwk_member(jwk, "x"));
      PORTCULLIS_ASSIGN_OR_RETURN(crypto::Ed25519PublicKey key,
                                  crypto::Ed25519PublicKey::from_bytes(x));
      return JwsPublicKey(std::move(key));
    }
  }
  return Status::invalid_argument("unknown JWS algorithm");
}

JwsAlg JwsPublicKey::alg() const {
  return std::visit(Visitor{[](const crypto::RsaPublicKey&) { return JwsAlg::kRS256; },
                            [](const crypto::P256PublicKey&) { return JwsAlg::kES256; },
                            [](const crypto::Ed25519PublicKey&) { return JwsAlg::kEdDSA; }},
                    key_);
}

bool JwsPublicKey::verify(std::string_view data, std::string_view sig) const {
  return std::visit(
      Visitor{[&](const crypto::RsaPublicKey& k) { return k.verify_rs256(data, sig); },
              [&](const crypto::P256PublicKey& k) { return k.verify_es256(data, sig); },
              [&](const crypto::Ed25519PublicKey& k) { return k.verify_eddsa(data, sig); }},
      key_);
}

std::vector<std::pair<std::string_view, std::string>> JwsPublicKey::required_members() const {
  using Members = std::vector<std::pair<std::string_view, std::string>>;
  using crypto::base64url_encode;
  return std::visit(
      Visitor{[](const crypto::RsaPublicKey& k) {
                return Members{
                    {"e", base64url_encode(k.e())}, {"kty", "RSA"}, {"n", base64url_encode(k.n())}};
              },
              [](const crypto::P256PublicKey& k) {
                return Members{{"crv", "P-256"},
                               {"kty", "EC"},
                               {"x", base64url_encode(k.x())},
                               {"y", base64url_encode(k.y())}};
              },
              [](const crypto::Ed25519PublicKey& k) {
                return Members{{"crv", "Ed25519"}, {"kty", "OKP"}, {"x", base64url_encode(k.x())}};
              }},
      key_);
}

Json::Value JwsPublicKey::jwk(std::string_view kid) const {
  Json::Value out(Json::objectValue);
  for (auto& [name, value] : required_members()) out[std::string(name)] = std::move(value);
  out["use"] = "sig";
  out["alg"] = std::string(alg_name(alg()));
  out["kid"] = std::string(kid);
  return out;
}

Result<JwsPrivateKey> JwsPrivateKey::generate(JwsAlg alg) {
  switch (alg) {
    case JwsAlg::kRS256: {
      PORTCULLIS_ASSIGN_OR_RETURN(crypto::RsaPrivateKey key, crypto::RsaPrivateKey::generate(2048));
      return JwsPrivateKey(std::move(key));
    }
    case JwsAlg::kES256: {
      PORTCULLIS_ASSIGN_OR_RETURN(crypto::P256PrivateKey key, crypto::P256PrivateKey::generate());
      return JwsPrivateKey(std::move(key));
    }
    case JwsAlg::kEdDSA: {
      PORTCULLIS_ASSIGN_OR_RETURN(crypto::Ed25519PrivateKey key,
                                  crypto::Ed25519PrivateKey::generate());
      return JwsPrivateKey(std::move(key));
    }
  }
  return Status::invalid_argument("unknown JWS algorithm");
}

Result<JwsPrivateKey> JwsPrivateKey::from_pkcs8_der(JwsAlg alg, std::string_view der) {
  switch (alg) {
    case JwsAlg::kRS256: {
      PORTCULLIS_ASSIGN_OR_RETURN(crypto::RsaPrivateKey key,
                                  crypto::RsaPrivateKey::from_pkcs8_der(der));
      return JwsPrivateKey(std::move(key));
    }
    case JwsAlg::kES256: {
      PORTCULLIS_ASSIGN_OR_RETURN(crypto::P256PrivateKey key,
                                  crypto::P256PrivateKey::from_pkcs8_der(der));
      return JwsPrivateKey(std::move(key));
    }
    case JwsAlg::kEdDSA: {
      PORTCULLIS_ASSIGN_OR_RETURN(crypto::Ed25519PrivateKey key,
                                  crypto::Ed25519PrivateKey::from_pkcs8_der(der));
      return JwsPrivateKey(std::move(key));
    }
  }
  return Status::invalid_argument("unknown JWS algorithm");
}

Result<std::string> JwsPrivateKey::to_pkcs8_der() const {
  return std::visit([](const auto& k) { return k.to_pkcs8_der(); }, key_);
}

JwsAlg JwsPrivateKey::alg() const {
  return std::visit(Visitor{[](const crypto::RsaPrivateKey&) { return JwsAlg::kRS256; },
                            [](const crypto::P256PrivateKey&) { return JwsAlg::kES256; },
                            [](const crypto::Ed25519PrivateKey&) { return JwsAlg::kEdDSA; }},
                    key_);
}

Result<std::string> JwsPrivateKey::sign(std::string_view data) const {
  return std::visit(Visitor{[&](const crypto::RsaPrivateKey& k) { return k.sign_rs256(data); },
                            [&](const crypto::P256PrivateKey& k) { return k.sign_es256(data); },
                            [&](const crypto::Ed25519PrivateKey& k) { return k.sign_eddsa(data); }},
                    key_);
}

size_t JwsPrivateKey::signature_bytes() const {
  return std::visit(
      Visitor{
          [](const crypto::RsaPrivateKey& k) { return (static_cast<size_t>(k.bits()) + 7) / 8; },
          [](const crypto::P256PrivateKey&) { return 2 * crypto::kP256CoordinateBytes; },
          [](const crypto::Ed25519PrivateKey&) { return size_t{64}; }},
      key_);
}

Result<JwsPublicKey> JwsPrivateKey::public_key() const {
  return std::visit(
      Visitor{[](const crypto::RsaPrivateKey& k) -> Result<JwsPublicKey> {
                return JwsPublicKey(k.public_key());
              },
              [](const crypto::P256PrivateKey& k) -> Result<JwsPublicKey> {
                PORTCULLIS_ASSIGN_OR_RETURN(crypto::P256PublicKey key, k.public_key());
                return JwsPublicKey(std::move(key));
              },
              [](const crypto::Ed25519PrivateKey& k) -> Result<JwsPublicKey> {
                PORTCULLIS_ASSIGN_OR_RETURN(crypto::Ed25519PublicKey key, k.public_key());
                return JwsPublicKey(std::move(key));
              }},
      key_);
}

}  // namespace portcullis::jose
