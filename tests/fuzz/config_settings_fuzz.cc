// The config-file parser on arbitrary text: it never crashes, and what it accepts validates
// into a Config or a clear error without crashing either.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  using namespace portcullis;
  auto settings = config::parse_settings(input);
  if (!settings) return 0;
  (void)config::from_settings(*settings);
  return 0;
}
