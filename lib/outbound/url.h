// The https URLs outbound requests may go to, parsed once by a deliberately small, strict
// parser, so that the host we check and pin is the host curl connects to: curl's own URL
// parser normalises hosts (IDN, numeric IPv4 forms, percent-encoding), and any form where two
// parsers could disagree is refused here instead of being interpreted.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "outbound/address.h"

namespace portcullis::outbound {

inline constexpr size_t kMaxUrlBytes = 4096;

struct HttpsUrl {
  std::string host;                  // lower-case DNS name, dotted quad, or IPv6 without brackets
  std::optional<IpAddress> ip;       // set when the host is an IP literal
  int port = 443;                    // the explicit port, or 443
  bool explicit_port = false;        // the URL names a port (even ":443")
  std::string authority;             // host[:port] exactly as written ([…] kept for IPv6)
  std::string path;                  // as written; empty when the URL has none
  std::optional<std::string> query;  // after '?', as written

  // "https://" + authority: the URL's origin as written (no trailing slash).
  std::string origin() const { return "https://" + authority; }
};

// Accepts `https://host[:port][/path][?query]` where the host is a lower-case DNS name
// (letters, digits, hyphens; dot-separated labels of 1–63 bytes), a dotted-quad IPv4 address
// or a bracketed IPv6 address without zone; the port 1–65535 without leading zeros; path and
// query made of RFC 3986 characters with well-formed %XX escapes. Refused, with an
// InvalidArgument naming the rule: any other scheme (http included), userinfo, a fragment,
// whitespace, control or non-ASCII bytes, a backslash, a numeric host that is not a dotted quad,
// more than kMaxUrlBytes. Messages never repeat the URL.
Result<HttpsUrl> parse_https_url(std::string_view url);

}  // namespace portcullis::outbound
