// The organization a /api/v1/organizations/{organization_id}/... route names (contract §0, §7):
// a malformed id is InvalidArgument (400, never 404), an unknown one NotFound.
#pragma once

#include <string>

#include "server/app.h"

namespace portcullis::api_worker {

Result<std::string> existing_organization(server::Context& ctx);

}  // namespace portcullis::api_worker
