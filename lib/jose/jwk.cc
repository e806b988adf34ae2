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

// Whether a JWKS entry is meant as an RS256 signing key (true) or for something else (false).
// A purpose member of the wrong JSON type is an error, not a reason to skip the key.
Result<bool> is_rs256_signing_key(const Json::Value& jwk) {
  const Json::Value* kty = json::find_member(jwk, "kty");
  if (kty == nullptr || !kty->isString()) {
    return Status::invalid_argument("JWK kty must be a string");
  }
  if (kty->asString() != "RSA") return false;
  for (const auto& [name, wanted] : {std::pair{"use", "sig"}, std::pair{"alg", "RS256"}}) {
    const Json::Value* member = json::find_member(jwk, name);
    if (member == nullptr) continue;
    if (!member->isString()) {
      return Status::invalid_argument("JWK " + std::string(name) + " must be a string");
    }
    if (member->asString() != wanted) return false;
  }
  return true;
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
  if (!jwk.isObject()) return Status::invalid_argument("JWK must be a JSON object");
  if (!is_string_equal(json::find_member(jwk, "kty"), "RSA")) {
    return Status::invalid_argument("JWK kty must be \"RSA\"");
  }
  if (const Json::Value* alg = json::find_member(jwk, "alg");
      alg && !is_string_equal(alg, "RS256")) {
    return Status::invalid_argument("JWK alg must be \"RS256\" when present");
  }
  if (const Json::Value* use = json::find_member(jwk, "use"); use && !is_string_equal(use, "sig")) {
    return Status::invalid_argument("JWK use must be \"sig\" when present");
  }
  // A published private key is compromised; accepting it would hide that from its owner.
  for (const char* name : {"d", "p", "q", "dp", "dq", "qi", "oth"}) {
    if (json::find_member(jwk, name) != nullptr) {
      return Status::invalid_argument("JWK contains private key material");
    }
  }
  PORTCULLIS_ASSIGN_OR_RETURN(std::string n, decode_jwk_member(jwk, "n"));
  PORTCULLIS_ASSIGN_OR_RETURN(std::string e, decode_jwk_member(jwk, "e"));
  return crypto::RsaPublicKey::from_components(n, e);
}

Result<RsaKeySet> parse_jwks(std::string_view text) {
  if (text.size() > kMaxJwksBytes) return Status::invalid_argument("JWKS exceeds 256 KiB");
  const auto document = json::parse(text, kMaxJoseNesting);
  if (!document || !document->isObject()) {
    return Status::invalid_argument("JWKS is not a JSON object");
  }
  const Json::Value* keys = json::find_member(*document, "keys");
  if (keys == nullptr || !keys->isArray()) {
    return Status::invalid_argument("JWKS keys must be an array");
  }

  RsaKeySet result;
  for (Json::ArrayIndex i = 0; i < keys->size(); ++i) {
    const Json::Value& jwk = (*keys)[i];
    const std::string where = "JWKS key " + std::to_string(i) + ": ";
    if (!jwk.isObject()) return Status::invalid_argument(where + "not a JSON object");
    const Result<bool> wanted = is_rs256_signing_key(jwk);
    if (!wanted.is_ok()) return Status::invalid_argument(where + wanted.status().message());
    if (!*wanted) continue;

    std::string kid;
    if (const Json::Value* kid_value = json::find_member(jwk, "kid")) {
      if (!kid_value->isString()) return Status::invalid_argument(where + "kid must be a string");
      kid = kid_value->asString();
    }
    // Two keys under one kid would make the key a token is checked against depend on order.
    const bool repeated = std::any_of(result.begin(), result.end(),
                                      [&](const auto& entry) { return entry.first == kid; });
    if (repeated) return Status::invalid_argument(where + "kid repeats an earlier key's kid");

    Result<crypto::RsaPublicKey> key = parse_rsa_jwk(jwk);
    if (!key.is_ok()) return Status::invalid_argument(where + key.status().message());
    result.emplace_back(std::move(kid), std::move(key).value());
  }
  return result;
}

}  // namespace portcullis::jose
