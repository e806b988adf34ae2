// The consent page (contract §3; MCP security best practices: name the client, list the
// scopes, show the redirect host, CSRF, no framing). Stable hooks: the form's buttons
// button[name=decision][value=allow] and button[name=decision][value=deny].
#pragma once

#include <string>
#include <vector>

#include "http/response.h"
#include "oauth/login_flow.h"

namespace portcullis::pages {

struct ConsentView {
  std::string login_request_id;
  std::string csrf_token;
  std::string signed_in_as;  // the user's e-mail address
  oauth::ConsentScreen screen;
  std::vector<std::string> form_targets;  // the decision ends in a 303 to the client
};

http::Response consent_page(const ConsentView& view);

}  // namespace portcullis::pages
