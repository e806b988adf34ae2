// /sso/saml/*: the SAML 2.0 service provider's endpoints (docs/sso.md).
//
//   /sso/start (type saml) ──303 + SSO cookie──► the IdP's SSO URL (HTTP-Redirect AuthnRequest,
//     RelayState = the pending sign-in's state)
//   IdP ──cross-site POST (no Lax cookie)──► POST /sso/saml/{conn_id}/acs: the response is
//     verified (saml_sp.h), its InResponseTo must be the pending request's ID, its assertion id
//     unseen; the verified user is parked on the pending sign-in
//   ──303──► GET /sso/saml/finish?state=…: a top-level GET, so the Lax cookie is back: the
//     pending sign-in must be this browser's; then the sign-in finishes as any other.
//   GET /sso/saml/{conn_id}/metadata: the SP's metadata for the IdP administrator.
#pragma once

#include <memory>
#include <string>

#include "login_flow.h"
#include "server/app.h"
#include "signin_support.h"
#include "sso/connection.h"

namespace portcullis::sso_worker {

// The redirect to the IdP for a login request (the caller checked the connection is active).
Result<http::Response> start_saml(server::Context& ctx, const oauth::LoginRequest& login,
                                  sso::Connection& connection, const std::string& browser,
                                  int64_t now);

void install_saml_routes(server::App& app, std::shared_ptr<oauth_worker::SigninDeps> deps);

}  // namespace portcullis::sso_worker
