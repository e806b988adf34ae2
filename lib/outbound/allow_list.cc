#include "outbound/allow_list.h"

#include <cctype>

namespace portcullis::outbound {
namespace {

// An entry is read as the authority of an https URL, so it follows exactly the host and port
// rules of the URLs it is compared with.
Result<HttpsUrl> parse_entry(const std::string& entry) {
  std::string text = "https://";
  for (char c : entry)
    text.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  auto parsed = parse_https_url(text);
  if (parsed && (!parsed->path.empty() || parsed->query)) {
    return Status::invalid_argument("an allow-list entry is host or host:port");
  }
  return parsed;
}

}  // namespace

bool host_allowed(const std::vector<std::string>& entries, const HttpsUrl& url) {
  for (const std::string& text : entries) {
    auto entry = parse_entry(text);
    if (!entry) continue;
    // IP literals compare as addresses, so "[0:0::1]" and "[::1]" name one host.
    bool same_host = url.ip ? entry->ip == url.ip : entry->host == url.host;
    if (!same_host) continue;
    if (!entry->explicit_port || entry->port == url.port) return true;
  }
  return false;
}

}  // namespace portcullis::outbound
