// What the OIDC and SAML endpoints share: the browser's SSO cookie, outbound options, the
// failure page + event, and the end of a sign-in once the IdP vouched for a user.
#pragma once

#include <optional>
#include <string>

#include "http/request.h"
#include "http/response.h"
#include "login_flow.h"
#include "outbound/https_get.h"
#include "server/app.h"
#include "signin_support.h"
#include "sso/connection.h"
#include "sso/provisioning.h"
#include "sso/sso_requests.h"

namespace portcullis::sso_worker {

// The random value of the browser's SSO cookie ("" when absent or implausible).
std::string browser_secret(const http::Request& request);
// Set-Cookie for it: Path=/sso/ (only these endpoints read it), HttpOnly, SameSite=Lax (the
// IdP's redirect back is a top-level GET), Secure on https, as long as a pending sign-in.
std::string browser_cookie(const server::Context& ctx, const std::string& value);

// The browser's SSO cookie value, or a new random one when it has none.
std::string browser_secret_or_new(const http::Request& request);
// The 303 to the identity provider, setting the SSO cookie to `browser`.
http::Response to_identity_provider(const server::Context& ctx, const std::string& url,
                                    const std::string& browser);

outbound::Options outbound_options(const config::Config& config);
outbound::Options outbound_options(const server::Context& ctx);
std::string oidc_redirect_uri(const server::Context& ctx);

// A refused sign-in: a user.login.failed event naming the connection and the reason, and the
// error page (with "start again" when the login request is known). Never a session.
// `method` is the event's: "sso", or "social" (social_routes.h) with its own page wording.
http::Response refuse(server::Context& ctx, const oauth::LoginRequest* login,
                      const std::string& connection_id, const std::string& organization_id,
                      const std::string& reason, const std::string& detail,
                      const std::string& method = "sso");

// The browser is back from the IdP with `state` (OIDC callback, SAML finish): its pending
// sign-in, used up, with the live login request and the active connection — or the page that
// refuses (unknown or used state, another browser, connection gone).
struct Returned {
  sso::PendingSignIn pending;
  oauth::LoginRequest login;
  sso::Connection connection;
};
struct ReturnedOrPage {
  std::optional<Returned> returned;
  http::Response page;
};
Result<ReturnedOrPage> take_returned(server::Context& ctx, oauth_worker::SigninDeps& deps,
                                     int64_t now);

// The IdP vouched for `asserted`: provision (lib/sso/provisioning.h), then finish as every
// sign-in method does (session, login event with the connection, consent or the client).
Result<http::Response> finish_sign_in(server::Context& ctx, oauth_worker::SigninDeps& deps,
                                      const oauth::LoginRequest& login,
                                      const sso::Connection& connection,
                                      const sso::AssertedUser& asserted, int64_t now);

}  // namespace portcullis::sso_worker
