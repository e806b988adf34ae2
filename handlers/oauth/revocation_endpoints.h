// POST /oauth/revoke (RFC 7009) and POST /oauth/introspect (RFC 7662), contract §5.
#pragma once

#include "server/app.h"

namespace portcullis::oauth_worker {

Result<http::Response> revocation_endpoint(server::Context& ctx);
Result<http::Response> introspection_endpoint(server::Context& ctx);

}  // namespace portcullis::oauth_worker
