// Redirect URI rules (contract §2.1, §3; RFC 9700 §4.1.3, RFC 8252 §7.3). One parser decides
// both what may be registered and whether a requested URI matches a registered one, so the two
// can never disagree (the root of several published redirect-URI bypasses).
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::oauth {

// May `uri` be registered? `https://` anywhere; `http://` only for localhost, 127.0.0.1 and
// [::1]; private-use schemes with a dot (`com.example.app:/cb`) for native apps. Never a
// fragment, a wildcard, userinfo, `..`/`.` segments, a `javascript:`/`data:`/`file:`/`vbscript:`
// scheme, whitespace or control characters, or more than 2,000 bytes. The error's reason is
// invalid_redirect_uri.
Status validate_redirect_uri(std::string_view uri);

// Does the requested URI match the registered one? An exact string comparison, except that a
// registered `http://127.0.0.1…`, `http://[::1]…` or `http://localhost…` URI matches the same
// URI with any port (or none): scheme, host, path and query still match exactly, and the three
// loopback hosts never match each other.
bool redirect_uri_matches(std::string_view registered, std::string_view requested);

// The host of a URI (for the consent page: "redirects to <host>"); empty when it has none.
std::string uri_host(std::string_view uri);

// True for http://localhost, http://127.0.0.1 and http://[::1] URIs.
bool is_loopback_redirect(std::string_view uri);

}  // namespace portcullis::oauth
