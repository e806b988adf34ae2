// Cache lifetimes from arbitrary header values (Cache-Control, Expires, Date, Age, one per
// line): never a crash or an overflow, always within [5 min, 24 h].
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cimd/freshness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace portcullis::cimd;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view fields[4];
  for (auto& field : fields) {
    size_t cut = input.find('\n');
    field = input.substr(0, cut);
    input = cut == std::string_view::npos ? std::string_view() : input.substr(cut + 1);
  }
  const int64_t now = 1'800'000'000;
  int64_t seconds = cache_seconds({fields[0], fields[1], fields[2], fields[3]}, now);
  if (seconds < kMinFreshSeconds || seconds > kMaxFreshSeconds) std::abort();
  (void)remaining_freshness({fields[0], fields[1], fields[2], fields[3]}, now);
  (void)parse_http_date(fields[1]);
  return 0;
}
