// /api/v1/environment (resources:write): how the environment signs users in — the customer's
// login URL for custom authentication and the methods the login page offers (contract §7).
// /api/v1/login_requests/{id}/complete (login_requests:write): the customer's backend names the
// user it signed in (contract §10, docs/login.md).
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_environment_routes(server::App& app);

}  // namespace portcullis::api_worker
