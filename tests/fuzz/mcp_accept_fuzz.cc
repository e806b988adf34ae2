// The Accept header of MCP POSTs on arbitrary bytes: never crashes, and the answer obeys the
// rules every reading must keep: an empty header takes nothing, and an explicit refusal (q=0)
// of the exact type listed first refuses it whatever follows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "mcp/accept.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using portcullis::mcp::accepts;
  for (std::string_view type : {"application/json", "text/event-stream"}) {
    (void)accepts(input, type);
    if (accepts(std::string(type) + ";q=0, " + std::string(input), type)) {
      // Only an equally specific element could override the first, and it never may.
      std::abort();
    }
  }
  (void)accepts(input, input);
  if (accepts("", input)) std::abort();
  return 0;
}
