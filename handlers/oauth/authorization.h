// The authorization endpoint (contract §3) and the LoginFlow it hands to the sign-in and
// consent pages.
//
// Order of checks, as RFC 9700 and the contract require: first the client and the redirect URI
// — when either is wrong the user gets a 400 HTML page and is never redirected anywhere (an
// unverified redirect_uri would make us an open redirector); only then every other parameter,
// whose errors go back to the verified redirect URI with `error`, `error_description`, `state`
// and `iss`.
#pragma once

#include <memory>

#include "login_flow.h"
#include "server/app.h"

namespace portcullis::oauth {

// GET or POST /oauth/authorize.
Result<http::Response> authorize(server::Context& ctx);

// The LoginFlow of this worker process.
std::unique_ptr<LoginFlow> make_login_flow(server::Services& services);

}  // namespace portcullis::oauth
