// rfc3339_to_db_time (the events API's start_time/end_time, replay's since) on arbitrary text:
// never crashes, and whatever it accepts comes out as one well-formed DATETIME(6)
// ("YYYY-MM-DD HH:MM:SS.ffffff") that it accepts again once written back in RFC 3339 form.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/rfc3339.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto t = portcullis::rfc3339_to_db_time(input);
  if (!t) return 0;
  const std::string& s = *t;
  if (s.size() != 26 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' ||
      s[16] != ':' || s[19] != '.') {
    std::abort();
  }
  std::string back = s.substr(0, 10) + "T" + s.substr(11) + "Z";
  auto again = portcullis::rfc3339_to_db_time(back);
  if (!again || *again != s) std::abort();
  return 0;
}
