#include "pages/security_headers.h"

#include <cctype>

#include "pages/stylesheet.h"

namespace portcullis::pages {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool valid_scheme(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (unsigned char c : s) {
    if (!std::isalnum(c) && c != '+' && c != '.' && c != '-') return false;
  }
  return true;
}

// host[:port], a DNS name or an IP literal; nothing that could end a CSP token or directive.
bool valid_authority(std::string_view a) {
  if (a.empty()) return false;
  size_t host_end = a.size();
  if (a.front() == '[') {
    size_t close = a.find(']');
    if (close == std::string_view::npos) return false;
    for (char c : a.substr(1, close - 1)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
    }
    host_end = close + 1;
  } else {
    host_end = a.find(':');
    if (host_end == std::string_view::npos) host_end = a.size();
    if (host_end == 0) return false;
    for (char c : a.substr(0, host_end)) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') return false;
    }
  }
  std::string_view port = a.substr(host_end);
  if (port.empty()) return true;
  if (port.front() != ':' || port.size() < 2 || port.size() > 6) return false;
  for (char c : port.substr(1)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> form_action_source(std::string_view uri) {
  size_t colon = uri.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string scheme = lower(uri.substr(0, colon));
  if (!valid_scheme(scheme)) return std::nullopt;
  if (scheme == "javascript" || scheme == "data" || scheme == "file" || scheme == "vbscript" ||
      scheme == "blob" || scheme == "filesystem") {
    return std::nullopt;
  }
  if (scheme != "http" && scheme != "https") return scheme + ":";
  std::string_view rest = uri.substr(colon + 1);
  if (rest.substr(0, 2) != "//") return std::nullopt;
  rest.remove_prefix(2);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (!valid_authority(authority)) return std::nullopt;
  return scheme + "://" + lower(authority);
}

std::string content_security_policy(const std::vector<std::string>& form_targets) {
  std::string form_action = "'self'";
  for (const std::string& t : form_targets) form_action += " " + t;
  return "default-src 'none'; style-src '" + stylesheet_hash() + "'; form-action " + form_action +
         "; frame-ancestors 'none'; base-uri 'none'";
}

void set_page_headers(http::Response& response, const std::vector<std::string>& form_targets) {
  response.set_header("Content-Security-Policy", content_security_policy(form_targets));
  response.set_header("X-Frame-Options", "DENY");
  response.set_header("Referrer-Policy", "no-referrer");
  response.set_header("Cache-Control", "no-store");
}

void set_portal_headers(http::Response& response) {
  set_page_headers(response, {});
  response.set_header("Content-Security-Policy",
                      "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; "
                      "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
                      "base-uri 'none'");
}

}  // namespace portcullis::pages
