// Changes to SSO connections (docs/sso.md) besides the store: the test that gates activation
// (an active connection is re-tested whenever it changes, so it never stays active broken) and
// the events. The management API and the admin portal both call these.
#pragma once

#include <optional>
#include <string>

#include "server/app.h"
#include "sso/connection_store.h"

namespace portcullis::operations {

sso::ConnectionStore connection_store(server::Context& ctx);

// "Active only when it tests valid": the configuration is complete and, for OIDC, the issuer's
// discovery document is reachable through the SSRF guard and names this issuer. For SAML the
// IdP metadata (fetched once from idp_metadata_url through the guard, then kept as
// idp_metadata_xml) must give Lasso exactly one IdP with an HTTP-Redirect SSO service.
// FailedPrecondition (or InvalidArgument) says why not.
Status test_connection(server::Context& ctx, sso::Connection& c);

// `c` holds the fields applied by sso::apply_body; assigns its id.
Status create_connection(server::Context& ctx, sso::Connection& c,
                         const std::optional<std::string>& client_secret);
// `c` is the stored connection with the changes applied; `was` its state before them.
Status update_connection(server::Context& ctx, sso::Connection& c, const std::string& was,
                         const std::optional<std::string>& client_secret);
Status delete_connection(server::Context& ctx, const sso::Connection& c);

}  // namespace portcullis::operations
