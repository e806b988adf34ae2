// DNS answers from a hostile or broken nameserver: never a crash, an overread or a hang, and no
// record longer than the message that carried it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "dns/txt_response.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view message(reinterpret_cast<const char*>(data), size);
  auto parsed =
      portcullis::dns::parse_txt_response(message, "_portcullis-verification.example.com");
  if (parsed) {
    for (const auto& record : parsed->records) {
      if (record.size() > size) std::abort();
    }
  }
  return 0;
}
