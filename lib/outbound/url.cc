#include "outbound/url.h"

#include <cctype>
#include <cstring>

namespace portcullis::outbound {
namespace {

Status bad(std::string why) {
  return Status::invalid_argument(std::move(why));
}

bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// RFC 3986 pchar minus '%' (checked separately), plus '/' and '?' as the caller allows.
bool is_url_char(char c, std::string_view extra) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  // The caller has already refused NUL, which strchr would find at the terminator.
  if (std::strchr("-._~!$&'()*+,;=:@", c) != nullptr) return true;
  return extra.find(c) != std::string_view::npos;
}

// Path or query: allowed characters and well-formed percent escapes.
Status check_component(std::string_view text, std::string_view extra, const char* what) {
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) {
        return bad(std::string("the ") + what + " has a truncated %-escape");
      }
      if (!is_hex(text[i + 1]) || !is_hex(text[i + 2])) {
        return bad(std::string("the ") + what + " has a malformed %-escape");
      }
      i += 2;
    } else if (!is_url_char(c, extra)) {
      return bad(std::string("the ") + what + " has a character that must be %-encoded");
    }
  }
  return Status::ok();
}

Status check_dns_name(std::string_view host) {
  if (host.size() > 253) return bad("the host name is longer than 253 bytes");
  size_t start = 0;
  while (true) {
    size_t dot = host.find('.', start);
    std::string_view label = host.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (label.empty()) return bad("the host name has an empty label");
    if (label.size() > 63) return bad("a host name label is longer than 63 bytes");
    if (label.front() == '-' || label.back() == '-') {
      return bad("a host name label starts or ends with a hyphen");
    }
    for (char c : label) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      if (!ok) {
        return std::isupper(static_cast<unsigned char>(c))
                   ? bad("the host name must be lower-case")
                   : bad("the host name may hold only letters, digits, hyphens and dots");
      }
    }
    if (dot == std::string_view::npos) {
      // No top-level domain starts with a digit; a host that ends in one is a numeric IPv4
      // form ("127.1", "0x7f.1", "2130706433") that resolvers read in different ways.
      if (std::isdigit(static_cast<unsigned char>(label.front()))) {
        return bad("a numeric host must be a dotted-quad IPv4 address");
      }
      return Status::ok();
    }
    start = dot + 1;
  }
}

Status parse_authority(std::string_view authority, HttpsUrl& out) {
  if (authority.find('@') != std::string_view::npos) return bad("the URL has userinfo");
  std::string_view host = authority;
  std::string_view port;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("the IPv6 host has no closing bracket");
    host = authority.substr(1, close - 1);
    std::string_view tail = authority.substr(close + 1);
    if (!tail.empty()) {
      if (tail.front() != ':') return bad("unexpected characters after the IPv6 host");
      has_port = true;
      port = tail.substr(1);
    }
    auto ip = parse_ip(host);
    if (!ip || ip->family != IpAddress::Family::kV6) return bad("the IPv6 host is not valid");
    out.ip = ip;
  } else {
    size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      has_port = true;
      port = authority.substr(colon + 1);
      host = authority.substr(0, colon);
    }
    if (host.empty()) return bad("the URL has no host");
    if (auto ip = parse_ip(host); ip && ip->family == IpAddress::Family::kV4) {
      out.ip = ip;
    } else {
      PORTCULLIS_RETURN_IF_ERROR(check_dns_name(host));
    }
  }
  if (has_port) {
    if (port.empty() || port.size() > 5 || port.front() == '0') return bad("the port is not valid");
    int value = 0;
    for (char c : port) {
      if (c < '0' || c > '9') return bad("the port is not valid");
      value = value * 10 + (c - '0');
    }
    if (value > 65535) return bad("the port is not valid");
    out.port = value;
    out.explicit_port = true;
  }
  out.host = std::string(host);
  out.authority = std::string(authority);
  return Status::ok();
}

}  // namespace

Result<HttpsUrl> parse_https_url(std::string_view url) {
  if (url.size() > kMaxUrlBytes) {
    return bad("the URL is longer than " + std::to_string(kMaxUrlBytes) + " bytes");
  }
  for (unsigned char c : url) {
    if (c <= 0x20 || c >= 0x7f) {
      return bad("the URL has whitespace, control or non-ASCII characters");
    }
    if (c == '\\') return bad("the URL has a backslash");
  }
  constexpr std::string_view kScheme = "https://";
  if (url.substr(0, kScheme.size()) != kScheme) return bad("the URL must start with https://");
  if (url.find('#') != std::string_view::npos) return bad("the URL has a fragment");
  std::string_view rest = url.substr(kScheme.size());
  size_t end = rest.find_first_of("/?");
  HttpsUrl out;
  PORTCULLIS_RETURN_IF_ERROR(parse_authority(rest.substr(0, end), out));
  if (end == std::string_view::npos) return out;
  rest.remove_prefix(end);
  size_t q = rest.find('?');
  out.path = std::string(rest.substr(0, q));
  PORTCULLIS_RETURN_IF_ERROR(check_component(out.path, "/", "path"));
  if (q != std::string_view::npos) {
    out.query = std::string(rest.substr(q + 1));
    PORTCULLIS_RETURN_IF_ERROR(check_component(*out.query, "/?", "query"));
  }
  return out;
}

}  // namespace portcullis::outbound
