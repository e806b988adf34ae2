// /api/v1/resources: the MCP servers Portcullis protects (contract §7), and the protected
// resource metadata document each of them publishes (contract §6). Reading needs the scope
// resources:read, changing resources:write.
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_resource_routes(server::App& app);

}  // namespace portcullis::api_worker
