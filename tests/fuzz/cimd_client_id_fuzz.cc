// client_id URL validation (and the outbound URL parser under it) on arbitrary bytes: never a
// crash, and whatever is accepted really has the properties the SSRF guard and the cache rely
// on: https, a host, a path that is not "/", no query, fragment, userinfo, whitespace or
// non-ASCII byte, and an origin that is a prefix of the URL.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cimd/client_id_url.h"
#include "outbound/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace portcullis;
  if (auto url = outbound::parse_https_url(input); url.is_ok()) {
    if (input.rfind(url->origin(), 0) != 0 || url->host.empty()) std::abort();
    if (url->port < 1 || url->port > 65535) std::abort();
    if (url->ip && url->host.find_first_of("[]") != std::string::npos) std::abort();
  }
  auto id = cimd::validate_client_id_url(input);
  if (!id.is_ok()) {
    if (id.status().reason() != "invalid_client") std::abort();
    return 0;
  }
  if (id->url != input || input.size() > cimd::kMaxClientIdBytes) std::abort();
  if (input.rfind("https://", 0) != 0) std::abort();
  if (id->parsed.path.empty() || id->parsed.path == "/" || id->parsed.query) std::abort();
  for (char c : input) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '#' || c == '?' || c == '\\') std::abort();
  }
  if (id->parsed.authority.find('@') != std::string::npos) std::abort();
  if (id->parsed.path.find("/../") != std::string::npos ||
      id->parsed.path.find("/./") != std::string::npos) {
    std::abort();
  }
  return 0;
}
