// /sso/*: sign-in through an organization's identity provider (contract §10, docs/sso.md).
//
//   /oauth/login (home-realm discovery) ──303──► GET /sso/start?login_request_id&connection_id
//     ──303 + SSO cookie──► the IdP ──► GET /sso/oidc/callback?code&state
//     ──ID token verified, user provisioned──► the same finish as every sign-in method
//     (handlers/oauth signin_support: session, login events, consent or the client)
//
// Every failure ends on an HTML error page and a user.login.failed event with the connection
// and the reason; never on a session.
#pragma once

#include "server/app.h"

namespace portcullis::sso_worker {

void install_sso_routes(server::App& app);

}  // namespace portcullis::sso_worker
