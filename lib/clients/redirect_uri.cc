#include "clients/redirect_uri.h"

#include <cctype>
#include <optional>

#include "clients/uri.h"

namespace portcullis::oauth {
namespace {

constexpr size_t kMaxRedirectUriBytes = 2000;

Status invalid(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_redirect_uri");
}

bool has_dot_segment(std::string_view path) {
  // Decode %2e first: "%2e%2e" is ".." to most servers that will receive the redirect.
  std::string decoded;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && path[i + 1] == '2' &&
        (path[i + 2] == 'e' || path[i + 2] == 'E')) {
      decoded.push_back('.');
      i += 2;
    } else {
      decoded.push_back(path[i]);
    }
  }
  size_t start = 0;
  while (start <= decoded.size()) {
    size_t slash = decoded.find('/', start);
    if (slash == std::string::npos) slash = decoded.size();
    std::string_view segment(decoded.data() + start, slash - start);
    segment = segment.substr(0, segment.find(';'));  // "..;/" is still ".."
    if (segment == "." || segment == "..") return true;
    start = slash + 1;
  }
  return false;
}

}  // namespace

Status validate_redirect_uri(std::string_view uri) {
  if (uri.empty()) return invalid("redirect URI is empty");
  if (uri.size() > kMaxRedirectUriBytes) return invalid("redirect URI is longer than 2000 bytes");
  for (unsigned char c : uri) {
    if (c <= 0x20 || c == 0x7f || c == '\\') {
      return invalid("redirect URI contains whitespace, a control character or a backslash");
    }
  }
  if (uri.find('#') != std::string_view::npos) return invalid("redirect URI has a fragment");
  if (uri.find('*') != std::string_view::npos) return invalid("redirect URI has a wildcard");
  auto p = parse_uri(uri);
  if (!p) return invalid("redirect URI is not an absolute URI");
  for (char c : p->scheme) {
    bool ok = std::islower(static_cast<unsigned char>(c)) ||
              std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
    if (!ok) return invalid("redirect URI scheme must be lower-case letters, digits, + - .");
  }
  if (!std::islower(static_cast<unsigned char>(p->scheme[0]))) {
    return invalid("redirect URI scheme must start with a letter");
  }
  const std::string& s = p->scheme;
  if (s == "javascript" || s == "data" || s == "file" || s == "vbscript" || s == "about" ||
      s == "blob" || s == "ftp" || s == "ws" || s == "wss") {
    return invalid("redirect URI scheme " + s + " is not allowed");
  }
  if (has_dot_segment(p->rest)) return invalid("redirect URI path has . or .. segments");
  if (s == "https" || s == "http") {
    if (!p->has_authority || p->host.empty()) return invalid("redirect URI has no host");
    if (p->has_userinfo) return invalid("redirect URI has userinfo");
    for (char c : p->host) {
      if (std::isupper(static_cast<unsigned char>(c))) {
        return invalid("redirect URI host must be lower-case");
      }
    }
    if (s == "http" && !is_loopback_host(p->host)) {
      return invalid("http redirect URIs are allowed only for localhost, 127.0.0.1 and [::1]");
    }
    return Status::ok();
  }
  // A private-use scheme (RFC 8252 §7.1): reverse-domain, so it must contain a dot.
  if (s.find('.') == std::string::npos) {
    return invalid("custom redirect URI schemes must be reverse-domain names (com.example.app)");
  }
  if (p->has_userinfo) return invalid("redirect URI has userinfo");
  if (p->rest.empty() || p->rest.front() != '/') {
    return invalid("custom-scheme redirect URIs take the form com.example.app:/path");
  }
  return Status::ok();
}

bool redirect_uri_matches(std::string_view registered, std::string_view requested) {
  if (registered == requested) return true;
  auto r = parse_uri(registered);
  auto q = parse_uri(requested);
  if (!r || !q) return false;
  // The port exception is for loopback http redirects only (RFC 8252 §7.3).
  if (r->scheme != "http" || q->scheme != "http") return false;
  if (!r->has_authority || !q->has_authority || r->has_userinfo || q->has_userinfo) return false;
  if (!is_loopback_host(r->host) || r->host != q->host) return false;
  return r->rest == q->rest;
}

std::string uri_host(std::string_view uri) {
  auto p = parse_uri(uri);
  if (!p || !p->has_authority) return "";
  return p->host;
}

bool is_loopback_redirect(std::string_view uri) {
  auto p = parse_uri(uri);
  return p && p->scheme == "http" && p->has_authority && is_loopback_host(p->host);
}

}  // namespace portcullis::oauth
