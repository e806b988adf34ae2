// A deliberately small parser for the absolute URIs OAuth registers and compares (redirect
// URIs, resource server URLs, client metadata URLs): scheme ":" ["//" authority] rest. It
// splits, it never normalises: every rule about what is acceptable lives with its caller
// (redirect_uri.h, resources.h, client_metadata.h), and all of them see the same split, so no
// two of them can disagree about where the host ends.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace portcullis::oauth {

struct UriParts {
  std::string scheme;  // as written
  bool has_authority = false;
  bool has_userinfo = false;
  std::string host;  // as written, [brackets] kept for IPv6
  std::string port;  // digits (at most 65535), may be empty
  std::string rest;  // path, query and fragment, as written
};

// nullopt when there is no scheme, an IPv6 literal is unclosed, or the port is not a number
// up to 65535.
std::optional<UriParts> parse_uri(std::string_view uri);

// localhost, 127.0.0.1 or [::1], exactly as written (lower-case): the hosts for which plain
// http is acceptable.
bool is_loopback_host(std::string_view host);

}  // namespace portcullis::oauth
