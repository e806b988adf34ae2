// /api/v1/social_connections: the environment's social login providers (contract §7, §10;
// docs/login.md). Every method needs resources:write: a connection decides who can sign in.
// The client secret is write-only (sealed at rest).
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_social_routes(server::App& app);

}  // namespace portcullis::api_worker
