// The audit trail (contract §11), scope events:read: GET /api/v1/events (filters, newest
// first, keyset pages) and GET /api/v1/users/{id}/access (the per-user scope access log).
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_event_routes(server::App& app);

}  // namespace portcullis::api_worker
