// The consent page (contract §3; MCP security best practices: name the client, list the
// scopes, show the redirect host, CSRF, no framing). Stable hooks: the form's buttons
// button[name=decision][value=allow] and button[name=decision][value=deny].
#pragma once

#include <string>
#include <vector>

#include "http/response.h"

namespace portcullis::pages {

// What the consent page shows (contract §3): who asks, for which server, where it redirects.
struct ConsentScreen {
  struct Scope {
    std::string name;
    std::string description;
  };
  std::string resource_name;
  std::string client_name;
  std::string client_host;  // for CIMD clients: the host of the client_id URL
  std::string redirect_host;
  std::vector<Scope> scopes;  // the requested ones, with the resource's descriptions
  bool client_is_cimd = false;
  bool redirect_is_localhost = false;  // shown as a warning: any local app could receive it
};

struct ConsentView {
  std::string login_request_id;
  std::string csrf_token;
  std::string signed_in_as;  // the user's e-mail address
  ConsentScreen screen;
  std::vector<std::string> form_targets;  // the decision ends in a 303 to the client
};

http::Response consent_page(const ConsentView& view);

}  // namespace portcullis::pages
