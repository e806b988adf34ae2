// parse_jwks on arbitrary documents. Every key it returns must survive a round trip through
// public_jwk and parse_rsa_jwk unchanged.
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
  return 0;
}
