// The sign-in pages (contract §10, §12). Stable hooks for browser automation, which customers
// script too: the first page always holds a form with input[name=email]; the code step a form
// with input[name=code]. Every form carries the login request id and its CSRF token.
#pragma once

#include <string>
#include <vector>

#include "http/response.h"

namespace portcullis::pages {

// A sign-in method offered beside the e-mail form (social, custom): a link that starts it,
// laid out above the e-mail form (which also leads to an organization's SSO by the domain).
struct SignInMethod {
  std::string label;  // "Continue with Google"
  std::string path;   // our own path + query, e.g. "/sso/social/start?…"; must start with "/"
};

struct LoginView {
  std::string login_request_id;
  std::string csrf_token;
  std::string resource_name;  // "to continue to …"; may be empty
  std::string client_name;    // the application asking; may be empty
  std::string email;          // prefilled: login_hint, or what was typed before an error
  std::string error;          // shown above the form; empty = none
  std::vector<SignInMethod> methods;
};
http::Response login_page(int status, const LoginView& view);

struct CodeView {
  std::string login_request_id;
  std::string csrf_token;
  std::string email;  // where the code went
  std::string error;
  std::vector<std::string> form_targets;  // the POST may redirect straight to the client
};
http::Response code_page(int status, const CodeView& view);

// The e-mailed link's landing page: one button that signs in. Mail scanners fetch links but
// do not submit forms, so they cannot use the link up before its owner does.
struct LinkView {
  std::string token;
  std::string csrf_token;
  std::string email;
  std::string resource_name;
  std::vector<std::string> form_targets;
};
http::Response link_page(const LinkView& view);

// The address belongs to an organization that signs in through its identity provider: a page
// that goes on to /sso/start?`sso_start_query` (a URL-encoded query) by a GET navigation — the
// Refresh header and a link — rather than a 303. A 303 answering the e-mail form's POST would be
// held to that form's CSP form-action, which cannot list every organization's IdP.
http::Response continue_to_idp_page(const std::string& sso_start_query);

// 429 with Retry-After: too many codes for this address or from this network.
http::Response too_many_codes_page(const std::string& login_request_id, int retry_after_seconds);

}  // namespace portcullis::pages
