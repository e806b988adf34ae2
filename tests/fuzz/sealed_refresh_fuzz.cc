// The sealed refresh token (lib/tokens/sealed_refresh.h): its plaintext decoder on arbitrary
// bytes, and open_refresh_token on arbitrary text.
//
// decode_sealed_refresh must accept exactly what encode_sealed_refresh writes: whatever it
// accepts encodes back to the same bytes. open_refresh_token must refuse anything it did not
// seal (a forgery would need the key, and only a token that opens can revoke a grant as reuse),
// and a sealed token of whatever decoded must open back to it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fixed_key.h"
#include "tokens/sealed_refresh.h"

using portcullis::fuzz::fixed_key;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace portcullis::oauth;

  if (const auto decoded = decode_sealed_refresh(input)) {
    if (encode_sealed_refresh(*decoded) != input) std::abort();
    const auto sealed = seal_refresh_token(fixed_key(), *decoded);
    if (!sealed.is_ok() || is_stored_refresh_token(*sealed)) std::abort();
    const auto opened = open_refresh_token(fixed_key(), *sealed);
    if (!opened || encode_sealed_refresh(*opened) != input) std::abort();
  }
  // The input as a presented token: no seed was sealed with this key's per-token keys, so
  // nothing the fuzzer makes may open.
  if (open_refresh_token(fixed_key(), input)) std::abort();
  return 0;
}
