// base64url_decode on arbitrary text, plus the property that makes the decoder strict: every
// accepted text is the one canonical encoding of what it decodes to, and every encoding decodes
// back to its input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "crypto/base64.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace portcullis::crypto;

  if (const auto decoded = base64url_decode(input)) {
    if (base64url_encode(*decoded) != input) std::abort();
  }
  if (base64url_decode(base64url_encode(input)) != input) std::abort();

  if (const auto decoded = base64_decode(input)) {
    if (base64_encode(*decoded) != input) std::abort();
  }
  if (base64_decode(base64_encode(input)) != input) std::abort();
  return 0;
}
