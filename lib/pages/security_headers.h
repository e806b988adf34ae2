// The headers every page (and every redirect a page's form leads to) carries:
//
//   Content-Security-Policy: default-src 'none'; style-src 'sha256-<the stylesheet>';
//       form-action 'self' [<the client's redirect origin>]; frame-ancestors 'none';
//       base-uri 'none'
//   X-Frame-Options: DENY            (frame-ancestors for browsers that predate it)
//   Referrer-Policy: no-referrer     (the login request id is in our URLs)
//   Cache-Control: no-store          (pages hold CSRF tokens and e-mail addresses)
//
// No script runs on any page; the one inline stylesheet is allowed by its hash, so nothing a
// value could smuggle into a page would execute or restyle it. form-action also governs the
// redirects that follow a form POST (browsers check each hop), so a page whose POST may end in
// the 303 to the client's redirect_uri lists that URI's origin.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/response.h"

namespace portcullis::pages {

// The CSP source expression for a redirect URI: "https://host[:port]" for http(s),
// "com.example.app:" for a private-use scheme. nullopt when the URI cannot be expressed as a
// source without risk (characters that would end the directive, userinfo, odd schemes).
std::optional<std::string> form_action_source(std::string_view redirect_uri);

// The policy; `form_targets` are extra form-action sources from form_action_source().
std::string content_security_policy(const std::vector<std::string>& form_targets);

void set_page_headers(http::Response& response, const std::vector<std::string>& form_targets);

// The admin portal's pages (handlers/admin): the same headers, with its stylesheet and its one
// small script served by the portal itself (`'self'`, never inline), and forms posting only
// to the portal:
//   default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self';
//   form-action 'self'; frame-ancestors 'none'; base-uri 'none'
void set_portal_headers(http::Response& response);

}  // namespace portcullis::pages
