#include "jose/jwk.h"

#include <algorithm>

#include "crypto/base64.h"
#include "format/json.h"
#include "jose/limits.h"

namespace portcullis::jose {
namespace {

bool is_string_equal(const Json::Value* value, std::string_view expected) {
  return value != nullptr && value->isString() && value->asString() == expected;
}

// The algorithm a JWKS entry is meant for, nullopt when it is not a signing key of an accepted
// algorithm. A purpose member of the wrong JSON type is an error, not a reason to skip the key.
Result<std::optional<JwsAlg>> signing_alg_of(const Json::Value& jwk,
                                             std::span<const JwsAlg> accepted) {
  const Json::Value* kty = json::find_member(jwk, "kty");
  if (kty == nullptr || !kty->isString()) {
    return Status::invalid_argument("JWK kty must be a string");
  }
  for (const char* name : {"use", "alg", "crv"}) {
    const Json::Value* member = json::find_member(jwk, name);
    if (member != nullptr && !member->isString()) {
      return Status::invalid_argument("JWK " + std::string(name) + " must be a string");
    }
  }
  std::optional<JwsAlg> implied;
  if (kty->asString() == "RSA") {
    implied = JwsAlg::kRS256;
  } else if (kty->asString() == "EC" && is_string_equal(json::find_member(jwk, "crv"), "P-256")) {
    implied = JwsAlg::kES256;
  } else if (kty->asString() == "OKP" &&
             is_string_equal(json::find_member(jwk, "crv"), "Ed25519")) {
    implied = JwsAlg::kEdDSA;
  }
  std::optional<JwsAlg> none;
  if (!implied) return none;
  if (const Json::Value* use = json::find_member(jwk, "use"); use && use->asString() != "sig") {
    return none;
  }
  if (const Json::Value* alg = json::find_member(jwk, "alg");
      alg && alg->asString() != alg_name(*implied)) {
    return none;
  }
  if (std::find(accepted.begin(), accepted.end(), *implied) == accepted.end()) return none;
  return implied;
}

}  // namespace

Result<std::string> decode_jwk_member(const Json::Value& jwk, std::string_view name) {
  const Json::Value* value = json::find_member(jwk, name);
  if (value == nullptr || !value->isString()) {
    return Status::invalid_argument("JWK member " + std::string(name) + " must be a string");
  }
  std::optional<std::string> bytes = crypto::base64url_decode(value->asString());
  if (!bytes || bytes->empty()) {
    return Status::invalid_argument("JWK member " + std::string(name) +
                                    " must be non-empty base64url without padding");
  }
  return *std::move(bytes);
}

Json::Value public_jwk(const crypto::RsaPublicKey& key, std::string_view kid) {
  Json::Value jwk(Json::objectValue);
  jwk["kty"] = "RSA";
  jwk["use"] = "sig";
  jwk["alg"] = "RS256";
  jwk["kid"] = std::string(kid);
  jwk["n"] = crypto::base64url_encode(key.n());
  jwk["e"] = crypto::base64url_encode(key.e());
  return jwk;
}

Result<crypto::RsaPublicKey> parse_rsa_jwk(const Json::Value& jwk) {
  PORTCULLIS_ASSIGN_OR_RETURN(JwsPublicKey key, JwsPublicKey::from_jwk(jwk, JwsAlg::kRS256));
  return std::get<crypto::RsaPublicKey>(std::move(key).take());
}

Result<JwsKeySet> parse_jws_jwks(std::string_view text, std::span<const JwsAlg> accepted) {
  if (text.size() > kMaxJwksBytes) return Status::invalid_argument("JWKS exceeds 256 KiB");
  const auto document = json::parse(text, kMaxJoseNesting);
  if (!document || !document->isObject()) {
    return Status::invalid_argument("JWKS is not a JSON object");
  }
  const Json::Value* keys = json::find_member(*document, "keys");
  if (keys == nullptr || !keys->isArray()) {
    return Status::invalid_argument("JWKS keys must be an array");
  }

  JwsKeySet result;
  for (Json::ArrayIndex i = 0; i < keys->size(); ++i) {
    const Json::Value& jwk = (*keys)[i];
    const std::string where = "JWKS key " + std::to_string(i) + ": ";
    if (!jwk.isObject()) return Status::invalid_argument(where + "not a JSON object");
    const Result<std::optional<JwsAlg>> alg = signing_alg_of(jwk, accepted);
    if (!alg.is_ok()) return Status::invalid_argument(where + alg.status().message());
    if (!*alg) continue;

    std::string kid;
    if (const Json::Value* kid_value = json::find_member(jwk, "kid")) {
      if (!kid_value->isString()) return Status::invalid_argument(where + "kid must be a string");
      kid = kid_value->asString();
    }
    // Two keys under one kid would make the key a token is checked against depend on order.
    const bool repeated = std::any_of(result.begin(), result.end(),
                                      [&](const auto& entry) { return entry.first == kid; });
    if (repeated) return Status::invalid_argument(where + "kid repeats an earlier key's kid");

    Result<JwsPublicKey> key = JwsPublicKey::from_jwk(jwk, **alg);
    if (!key.is_ok()) return Status::invalid_argument(where + key.status().message());
    result.emplace_back(std::move(kid), std::move(key).value());
  }
  return result;
}

Result<RsaKeySet> parse_jwks(std::string_view text) {
  constexpr std::array<JwsAlg, 1> kRsaOnly = {JwsAlg::kRS256};
  PORTCULLIS_ASSIGN_OR_RETURN(JwsKeySet keys, parse_jws_jwks(text, kRsaOnly));
  RsaKeySet result;
  result.reserve(keys.size());
  for (auto& [kid, key] : keys) {
    result.emplace_back(std::move(kid), std::get<crypto::RsaPublicKey>(std::move(key).take()));
  }
  return result;
}

}  // namespace portcullis::jose
