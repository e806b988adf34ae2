// /api/v1/clients: management API clients (contract §7).
//
// Any management token may read them. Creating or deleting one never grants more than the
// caller holds: a new client's scopes must be a subset of the caller's, and a client can only
// be deleted by a caller holding every scope it has.
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_api_client_routes(server::App& app);

}  // namespace portcullis::api_worker
