#include "clients/uri.h"

#include <cctype>

namespace portcullis::oauth {

std::optional<UriParts> parse_uri(std::string_view uri) {
  UriParts p;
  size_t colon = uri.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  p.scheme = std::string(uri.substr(0, colon));
  std::string_view after = uri.substr(colon + 1);
  if (after.rfind("//", 0) == 0) {
    p.has_authority = true;
    after.remove_prefix(2);
    // RFC 3986 §3.2: the authority ends at the first "/", "?" or "#".
    size_t end = after.find_first_of("/?#");
    std::string_view authority = after.substr(0, end);
    p.rest = end == std::string_view::npos ? "" : std::string(after.substr(end));
    if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
      p.has_userinfo = true;
      authority.remove_prefix(at + 1);
    }
    if (!authority.empty() && authority.front() == '[') {
      size_t close = authority.find(']');
      if (close == std::string_view::npos) return std::nullopt;
      p.host = std::string(authority.substr(0, close + 1));
      std::string_view tail = authority.substr(close + 1);
      if (!tail.empty()) {
        if (tail.front() != ':') return std::nullopt;
        p.port = std::string(tail.substr(1));
      }
    } else {
      size_t port_colon = authority.rfind(':');
      p.host = std::string(authority.substr(0, port_colon));
      if (port_colon != std::string_view::npos)
        p.port = std::string(authority.substr(port_colon + 1));
    }
    for (char c : p.port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    }
    if (p.port.size() > 5 || (!p.port.empty() && std::stoi(p.port) > 65535)) return std::nullopt;
  } else {
    p.rest = std::string(after);
  }
  return p;
}

bool is_loopback_host(std::string_view host) {
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]";
}

}  // namespace portcullis::oauth
