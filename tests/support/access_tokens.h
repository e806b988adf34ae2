// What the validation unit tests share: one fixed clock, one resource (issuer and audience), RSA
// keys generated once per test binary, and the claims of an access token as Portcullis issues it
// (contract §4), for tests to sign and then change.
#pragma once

#include <json/value.h>

#include <array>
#include <cstdint>
#include <string>

#include "crypto/rsa.h"

namespace portcullis::testing {

inline constexpr int64_t kNow = 1'800'000'000;
inline const std::string kIssuer = "https://auth.example.com/resources/res_01";
inline const std::string kAudience = "https://mcp.example.com/mcp";

// Three 2048-bit keys (slots 0..2), made once per binary on first use (thread-safe).
inline const crypto::RsaPrivateKey& rsa_key(size_t slot) {
  static const std::array<crypto::RsaPrivateKey, 3> keys = {
      crypto::RsaPrivateKey::generate(2048).value(), crypto::RsaPrivateKey::generate(2048).value(),
      crypto::RsaPrivateKey::generate(2048).value()};
  return keys.at(slot);
}

// Issued 10 s before kNow for kAudience, valid for 10 minutes.
inline Json::Value access_claims(const std::string& scope = "demo:read") {
  Json::Value c(Json::objectValue);
  c["iss"] = kIssuer;
  c["aud"] = kAudience;
  c["sub"] = "usr_01";
  c["client_id"] = "dcr_01";
  c["scope"] = scope;
  c["iat"] = static_cast<Json::Int64>(kNow - 10);
  c["nbf"] = static_cast<Json::Int64>(kNow - 10);
  c["exp"] = static_cast<Json::Int64>(kNow + 600);
  c["jti"] = "jti-1";
  c["org_id"] = "org_acme";
  return c;
}

}  // namespace portcullis::testing
