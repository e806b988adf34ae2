// Form bodies and query strings (OAuth parameters) on arbitrary bytes: decoding never crashes,
// and every decoded pair survives an encode → decode round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace portcullis::http;
  auto form = parse_urlencoded(input);
  if (!form) return 0;
  std::string encoded;
  for (const auto& [k, v] : form->all()) {
    if (!encoded.empty()) encoded += '&';
    encoded += url_encode(k) + "=" + url_encode(v);
  }
  auto again = parse_urlencoded(encoded);
  if (!again) std::abort();
  if (again->all() != form->all()) std::abort();
  (void)form->first_repeated();
  return 0;
}
