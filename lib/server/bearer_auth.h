// The "authenticate caller" phase for /api/v1: a management token (RFC 9068 JWT from the
// client_credentials grant) in `Authorization: Bearer`. Verified against the key ring, then the
// API client is looked up so that deleting a client cuts its tokens off at once.
#pragma once

#include "core/status.h"
#include "server/app.h"

namespace portcullis::server {

// Unauthenticated (401) for a missing or bad token; PermissionDenied (403) when the token lacks
// `auth.scope`.
Result<server::Caller> authenticate_management_token(const http::Request& request,
                                                     const server::Auth& auth,
                                                     server::Services& services);

}  // namespace portcullis::server
