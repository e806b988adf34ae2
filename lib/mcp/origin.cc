#include "mcp/origin.h"

#include <cctype>

#include "clients/uri.h"

namespace portcullis::mcp {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::optional<std::string> web_origin(std::string_view url) {
  auto parts = oauth::parse_uri(url);
  if (!parts || !parts->has_authority || parts->has_userinfo || parts->host.empty()) {
    return std::nullopt;
  }
  std::string scheme = lower(parts->scheme);
  if (scheme != "http" && scheme != "https") return std::nullopt;
  std::string out = scheme + "://" + lower(parts->host);
  const std::string default_port = scheme == "http" ? "80" : "443";
  if (!parts->port.empty() && parts->port != default_port) out += ":" + parts->port;
  return out;
}

bool origin_allowed(const std::optional<std::string>& origin_header, std::string_view server_url) {
  if (!origin_header) return true;
  // An Origin is just scheme://host[:port]; anything more (a path) is not one a browser sent.
  const std::string& origin = *origin_header;
  size_t authority = origin.find("//");
  if (authority == std::string::npos || origin.find('/', authority + 2) != std::string::npos) {
    return false;
  }
  auto ours = web_origin(server_url);
  auto theirs = web_origin(origin);
  if (!ours || !theirs) return false;
  return *ours == *theirs;
}

}  // namespace portcullis::mcp
