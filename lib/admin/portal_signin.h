// The admin portal signs people in through the environment's own login pages, as a built-in
// first-party client of its own server: authorization code + PKCE (RFC 7636) through the same
// login requests /oauth/authorize stores, so every sign-in method the environment offers (e-mail
// code, social, enterprise SSO, custom authentication) works for the portal too, with the same
// method policy. Unlike a registered client it gets no tokens: the code is redeemed here, in
// process, for the user it names, and the portal starts its own session (session_store.h).
//
//   GET /admin/login ── start(): a login request for kPortalClientId, cookie {state, verifier}
//     ──► /oauth/login?login_request_id=… (the sign-in pages; no consent page for the portal)
//     ──► 303 {base_url}/admin/callback?code&state ── redeem() ──► the user, a portal session
//
// The client id is no registered client's: /oauth/authorize and /oauth/token never resolve
// it, so a portal code cannot be exchanged for tokens anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"
#include "core/status.h"
#include "http/request.h"
#include "store/db.h"

namespace portcullis::admin {

inline constexpr std::string_view kPortalClientId = "portcullis-admin-portal";
inline constexpr std::string_view kPortalName = "Portcullis admin portal";

// {base_url}/admin/callback
std::string callback_url(const config::Config& config);

struct StartedLogin {
  std::string login_request_id;
  std::string cookie;  // Set-Cookie: the state and PKCE verifier, for the callback only
};

// A login request for the portal; `next` (a /admin/… path) is where the callback sends the
// browser once signed in.
Result<StartedLogin> start_login(store::Db& db, const config::Config& config,
                                 const std::string& next, int64_t now);

struct SignedIn {
  std::string user_id;
  int64_t auth_time = 0;
  std::string next;  // a /admin/… path
};

// The callback: checks `state` against the browser's cookie and redeems `code` (single use,
// PKCE, bound to the portal and its callback URL). PermissionDenied when anything does not match.
Result<SignedIn> redeem(store::Db& db, const config::Config& config, const http::Request& request,
                        const std::string& code, const std::string& state, int64_t now);

// The Set-Cookie value that removes the sign-in cookie.
std::string clearing_login_cookie(const config::Config& config);

// `next` when it is a path of the portal, else "/admin".
std::string safe_next(std::string_view next);

}  // namespace portcullis::admin
