// libFuzzer: the structural checks of a SAML Response (lib/sso/saml_shape.h) on arbitrary
// bytes: libxml2 parsing without network or entity substitution, then the walk.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sso/saml_shape.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string reason;
  auto status = portcullis::sso::check_response_shape(
      std::string_view(reinterpret_cast<const char*>(data), size), reason);
  // A refusal always names its reason; an acceptance never does.
  if (status.is_ok() != reason.empty()) __builtin_trap();
  return 0;
}
