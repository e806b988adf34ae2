// The handlers behind signin_routes.h's routes; each returns a page or a 303, and a Status
// only for failures the route wrapper turns into an HTML error page.
#pragma once

#include "signin_support.h"

namespace portcullis::oauth_worker {

// login_pages.cc
Result<http::Response> show_login(server::Context& ctx, SigninDeps& deps);
Result<http::Response> send_code(server::Context& ctx, SigninDeps& deps);
// code_pages.cc
Result<http::Response> show_code(server::Context& ctx, SigninDeps& deps);
Result<http::Response> check_code(server::Context& ctx, SigninDeps& deps);
Result<http::Response> show_link(server::Context& ctx, SigninDeps& deps);
Result<http::Response> use_link(server::Context& ctx, SigninDeps& deps);
// custom_pages.cc
Result<http::Response> start_custom(server::Context& ctx, SigninDeps& deps);
Result<http::Response> continue_custom(server::Context& ctx, SigninDeps& deps);
// consent_pages.cc
Result<http::Response> show_consent(server::Context& ctx, SigninDeps& deps);
Result<http::Response> decide_consent(server::Context& ctx, SigninDeps& deps);

}  // namespace portcullis::oauth_worker
