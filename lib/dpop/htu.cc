#include "dpop/htu.h"

#include "clients/uri.h"

namespace portcullis::dpop {
namespace {

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool is_unreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// A DNS name or IPv4 address (letters, digits, '-', '.', '_', '~'), or a bracketed IPv6
// literal. parse_uri only splits, so anything else (a second ':', '%', sub-delims) is refused
// here rather than normalised into something that means another host.
bool is_plain_host(std::string_view host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    return host.substr(1, host.size() - 2).find_first_not_of("0123456789abcdefABCDEF:.") ==
           std::string_view::npos;
  }
  for (const char c : host) {
    if (!is_unreserved(c)) return false;
  }
  return true;
}

// RFC 3986 §6.2.2.1 and §6.2.2.2.
std::optional<std::string> normalize_escapes(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out += path[i];
      continue;
    }
    if (i + 2 >= path.size()) return std::nullopt;
    const int high = hex_value(path[i + 1]);
    const int low = hex_value(path[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    const char decoded = static_cast<char>(high * 16 + low);
    if (is_unreserved(decoded)) {
      out += decoded;
    } else {
      out += '%';
      out += kHex[high];
      out += kHex[low];
    }
    i += 2;
  }
  return out;
}

void drop_last_segment(std::string& out) {
  const size_t slash = out.rfind('/');
  out.erase(slash == std::string::npos ? 0 : slash);
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// RFC 3986 §5.2.4.
std::string remove_dot_segments(std::string in) {
  std::string out;
  while (!in.empty()) {
    if (starts_with(in, "../")) {
      in.erase(0, 3);
    } else if (starts_with(in, "./")) {
      in.erase(0, 2);
    } else if (starts_with(in, "/./")) {
      in.replace(0, 3, "/");
    } else if (in == "/.") {
      in = "/";
    } else if (starts_with(in, "/../")) {
      in.replace(0, 4, "/");
      drop_last_segment(out);
    } else if (in == "/..") {
      in = "/";
      drop_last_segment(out);
    } else if (in == "." || in == "..") {
      in.clear();
    } else {
      const size_t next = in.find('/', in[0] == '/' ? 1 : 0);
      out.append(in, 0, next);
      in.erase(0, next);
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> normalize_htu(std::string_view uri) {
  if (uri.size() > kMaxHtuBytes) return std::nullopt;
  for (const char c : uri) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return std::nullopt;
    }
  }
  std::optional<oauth::UriParts> parts = oauth::parse_uri(uri);
  if (!parts || !parts->has_authority || parts->has_userinfo || parts->host.empty() ||
      !is_plain_host(parts->host)) {
    return std::nullopt;
  }
  std::string scheme;
  for (const char c : parts->scheme) scheme += lower(c);
  if (scheme != "http" && scheme != "https") return std::nullopt;
  std::string out = scheme + "://";
  for (const char c : parts->host) out += lower(c);
  if (!parts->port.empty()) {
    const int port = std::stoi(parts->port);  // digits only, at most 65535: parse_uri checked
    if (port == 0) return std::nullopt;
    if (port != (scheme == "https" ? 443 : 80)) out += ":" + std::to_string(port);
  }
  std::string_view path = parts->rest;
  path = path.substr(0, path.find_first_of("?#"));
  std::optional<std::string> escaped = normalize_escapes(path);
  if (!escaped) return std::nullopt;
  std::string clean = remove_dot_segments(*std::move(escaped));
  out += clean.empty() ? "/" : clean;
  return out;
}

}  // namespace portcullis::dpop
