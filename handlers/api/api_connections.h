// /api/v1/organizations/{organization_id}/connections: the organization's SSO connections
// (contract §7; docs/sso.md). Every method needs organizations:write — a connection decides who
// can sign in as the organization's users. The OIDC client secret is write-only.
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_connection_routes(server::App& app);

}  // namespace portcullis::api_worker
