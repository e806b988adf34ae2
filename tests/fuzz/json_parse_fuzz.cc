// The request-body JSON reader on arbitrary bytes: it never throws or crashes, and whatever it
// accepts is written back to JSON that it accepts again with the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "format/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace portcullis;
  auto parsed = json::parse(input);
  if (!parsed) return 0;
  auto again = json::parse(json::write(*parsed));
  if (!again || !(*again == *parsed)) std::abort();
  return 0;
}
