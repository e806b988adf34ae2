// /api/v1/organizations/{id}/directories: SCIM directories (contract §7). Scope
// directories:write. Events directory.created, directory.token.rotated, directory.deleted.
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_directory_routes(server::App& app);

}  // namespace portcullis::api_worker
