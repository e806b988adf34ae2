// The "authenticate caller" phase for /scim/v2: a SCIM directory's bearer token
// (`Authorization: Bearer scim_…`). Every failure is the same 401 (with `WWW-Authenticate:
// Bearer`), so a revoked token cannot be told from one that never existed.
#pragma once

#include "core/status.h"
#include "server/app.h"

namespace portcullis::scim {

Result<server::Caller> authenticate_scim_token(const http::Request& request,
                                               const server::Auth& auth,
                                               server::Services& services);

}  // namespace portcullis::scim
