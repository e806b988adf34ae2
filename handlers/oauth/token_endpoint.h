// POST /oauth/token (contract §4).
#pragma once

#include "server/app.h"

namespace portcullis::oauth_worker {

Result<http::Response> token_endpoint(server::Context& ctx);

}  // namespace portcullis::oauth_worker
