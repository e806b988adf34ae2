#include "cimd/client_id_url.h"

#include <cctype>

namespace portcullis::cimd {
namespace {

Status bad_url(const std::string& why) {
  return invalid_client("The application's client_id is not a valid client metadata URL: " + why +
                        ".");
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

// The path as a server may see it: every %-escape decoded (parse_https_url has checked they
// are well formed), so "%2e%2e" and "%2e%2e%2f" count as what they spell.
std::string percent_decoded(std::string_view path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size()) {
      out.push_back(static_cast<char>(hex_value(path[i + 1]) * 16 + hex_value(path[i + 2])));
      i += 2;
    } else {
      out.push_back(path[i]);
    }
  }
  return out;
}

bool has_dot_segment(std::string_view path) {
  const std::string decoded = percent_decoded(path);
  size_t start = 0;
  while (start <= decoded.size()) {
    size_t end = decoded.find('/', start);
    if (end == std::string::npos) end = decoded.size();
    std::string_view segment(decoded.data() + start, end - start);
    // Tomcat-style servers drop ";parameters" before resolving ("..;/").
    segment = segment.substr(0, segment.find(';'));
    if (segment == "." || segment == "..") return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

Status invalid_client(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_client");
}

Result<ClientIdUrl> validate_client_id_url(std::string_view client_id) {
  if (client_id.size() > kMaxClientIdBytes) {
    return bad_url("it is longer than " + std::to_string(kMaxClientIdBytes) + " bytes");
  }
  auto parsed = outbound::parse_https_url(client_id);
  if (!parsed) return bad_url(parsed.status().message());
  if (parsed->path.empty() || parsed->path == "/") return bad_url("it has no path");
  if (parsed->query) return bad_url("it has a query string");
  if (has_dot_segment(parsed->path)) return bad_url("its path has . or .. segments");
  return ClientIdUrl{std::string(client_id), std::move(*parsed)};
}

}  // namespace portcullis::cimd
