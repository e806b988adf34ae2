// /sso/social/*: sign-in through a social connection (contract §10, docs/login.md).
//
//   login page button, or /oauth/authorize?connection_id=soc_… ──303──►
//   GET /sso/social/start?login_request_id&connection_id ──303 + SSO cookie──► the provider
//   ──► GET /sso/social/callback?code&state: the pending sign-in must be this browser's
//   (lib/sso/sso_requests.h: state single use, PKCE verifier and nonce derived from the cookie),
//   the provider's answer verified (lib/social/provider_client.h), the account linked
//   (lib/social/linking.h) ──► the same finish as every sign-in method.
//
// Every failure ends on an HTML error page and a user.login.failed event (method "social",
// the connection and the reason); never on a session.
#pragma once

#include <memory>

#include "server/app.h"
#include "signin_support.h"

namespace portcullis::sso_worker {

void install_social_routes(server::App& app, std::shared_ptr<oauth_worker::SigninDeps> deps);

}  // namespace portcullis::sso_worker
