// parse_jwks and parse_jws_jwks on arbitrary documents. Every key they return must survive a
// round trip through its published form (public_jwk / JwsPublicKey::jwk) unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "jose/jwk.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace portcullis;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const Result<jose::RsaKeySet> keys = jose::parse_jwks(input);
  if (!keys.is_ok()) return 0;
  for (const auto& [kid, key] : *keys) {
    if (key.bits() < crypto::kMinRsaBits) std::abort();
    const Result<crypto::RsaPublicKey> again = jose::parse_rsa_jwk(jose::public_jwk(key, kid));
    if (!again.is_ok() || again->n() != key.n() || again->e() != key.e()) std::abort();
  }
  const Result<jose::JwsKeySet> any = jose::parse_jws_jwks(input);
  if (!any.is_ok()) return 0;
  // Every RSA key of the RS256-only reader is among them (it reads a subset).
  if (any->size() < keys->size()) std::abort();
  for (const auto& [kid, key] : *any) {
    const Result<jose::JwsPublicKey> again = jose::JwsPublicKey::from_jwk(key.jwk(kid), key.alg());
    if (!again.is_ok() || again->alg() != key.alg() ||
        again->required_members() != key.required_members()) {
      std::abort();
    }
  }
  return 0;
}
