// /api/v1/organizations: create, read, list, update and delete organizations (contract §7).
// Reading needs organizations:read, changing organizations:write. Events organization.created,
// organization.updated, organization.deleted.
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_organization_routes(server::App& app);

}  // namespace portcullis::api_worker
