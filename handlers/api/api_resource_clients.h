// /api/v1/resources/{resource_id}/clients: pre-registered clients of a resource (contract §2.3,
// §7), for clients that ship fixed credentials. The request is an RFC 7591 registration and the
// answer DCR's, plus create_time (and last_used_time once used). The listing shows DCR clients
// too, so an operator can see and delete whatever can obtain tokens for the resource.
// Creating and deleting need resources:write, listing resources:read.
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_resource_client_routes(server::App& app);

}  // namespace portcullis::api_worker
