// libFuzzer: the checks of a decrypted Assertion (lib/sso/saml_shape.h check_assertion_shape)
// on arbitrary bytes: parsing as a Response is parsed (no DTD, no network), the element walk,
// signature placement and references, comments and IDs.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sso/saml_shape.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // The first byte says whether the Response around it was signed.
  const bool response_signed = data[0] & 1;
  std::string reason;
  auto status = portcullis::sso::check_assertion_shape(
      std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), response_signed, reason);
  // A refusal always names its reason; an acceptance never does.
  if (status.is_ok() != reason.empty()) __builtin_trap();
  return 0;
}
