// The signature's share of an access token (issue 16 item 5): jose::sign_jwt and jose::verify_jws
// on a contract-shaped access token with RS256, ES256 and EdDSA keys, single-threaded. Prints
// microseconds per signed token and per verification and the token's length, beside which
// bench/README.md ("ES256 and EdDSA") sets `openssl speed` and the refresh grant's CPU.
// Usage: portcullis-bench-token-sign [TOKENS per algorithm]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "jose/jwt.h"

using namespace portcullis;

int main(int argc, char** argv) {
  const long tokens = argc > 1 ? std::atol(argv[1]) : 2000;
  Json::Value claims(Json::objectValue);
  claims["iss"] = "https://auth.example.com/resources/res_01jd3k6v2q8x4n7r9t0w5y1z3a";
  claims["sub"] = "usr_01jd3k6v2q8x4n7r9t0w5y1z3b";
  claims["aud"] = "https://mcp.example.com/mcp";
  claims["client_id"] = "dcr_01jd3k6v2q8x4n7r9t0w5y1z3c";
  claims["scope"] = "todo:read todo:write";
  claims["iat"] = 1800000000;
  claims["nbf"] = 1800000000;
  claims["exp"] = 1800000900;
  claims["jti"] = "grt_01jd3k6v2q8x4n7r9t0w5y1z3d.5mJ0nYtq3a6Ck1z9hRrC2w";
  claims["auth_time"] = 1799999000;
  std::printf("alg\tsign_us\tverify_us\ttoken_bytes\n");
  for (jose::JwsAlg alg : jose::kAccessTokenAlgs) {
    const auto key = jose::JwsPrivateKey::generate(alg);
    const auto public_key = key ? key->public_key() : Result<jose::JwsPublicKey>(key.status());
    if (!public_key) {
      std::fprintf(stderr, "%s\n", public_key.status().to_string().c_str());
      return 1;
    }
    std::string token;
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < tokens; ++i) token = jose::sign_jwt(claims, "at+jwt", "k1", *key).value();
    const auto t1 = std::chrono::steady_clock::now();
    const jose::JwsKeyForKid keys = [&](std::string_view) { return &*public_key; };
    for (long i = 0; i < tokens; ++i) {
      if (!jose::verify_jws(token, keys).is_ok()) return 1;
    }
    const auto t2 = std::chrono::steady_clock::now();
    const auto us = [&](auto d) {
      return std::chrono::duration<double, std::micro>(d).count() / static_cast<double>(tokens);
    };
    std::printf("%s\t%.1f\t%.1f\t%zu\n", std::string(jose::alg_name(alg)).c_str(), us(t1 - t0),
                us(t2 - t1), token.size());
  }
  return 0;
}
