// Redirect URI validation and matching on arbitrary bytes: never a crash, every URI that may be
// registered matches itself, and a match is never granted across different schemes or hosts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "clients/redirect_uri.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace portcullis::oauth;
  // Split the input in two: a registered URI and a requested one.
  size_t cut = input.find('\n');
  std::string_view registered = input.substr(0, cut);
  std::string_view requested = cut == std::string_view::npos ? input : input.substr(cut + 1);
  bool valid = validate_redirect_uri(registered).is_ok();
  if (valid && !redirect_uri_matches(registered, registered)) std::abort();
  if (valid && redirect_uri_matches(registered, requested) && registered != requested) {
    // Only the loopback port may differ.
    if (!is_loopback_redirect(registered) || uri_host(registered) != uri_host(requested)) {
      std::abort();
    }
  }
  (void)uri_host(input);
  return 0;
}
