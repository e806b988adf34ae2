// The sealed authorization code (lib/tokens/sealed_code.h): its plaintext decoder on arbitrary
// bytes, and open_code on arbitrary text.
//
// decode_sealed_code must accept exactly what encode_sealed_code writes: whatever it accepts
// encodes back to the same bytes. open_code must refuse anything it did not seal (a forgery would
// need the key), and a sealed code of whatever decoded must open back to it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fixed_key.h"
#include "tokens/sealed_code.h"

using portcullis::fuzz::fixed_key;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace portcullis::oauth;

  if (const auto decoded = decode_sealed_code(input)) {
    if (encode_sealed_code(*decoded) != input) std::abort();
    const auto sealed = seal_code(fixed_key(), *decoded);
    if (!sealed.is_ok()) std::abort();
    const auto opened = open_code(fixed_key(), *sealed);
    if (!opened || encode_sealed_code(*opened) != input) std::abort();
  }
  // The input as a presented code: no seed was sealed with this key's per-code keys, so nothing
  // the fuzzer makes may open.
  if (open_code(fixed_key(), input)) std::abort();
  return 0;
}
