// /api/v1/users (create, read, change, delete; users:read / users:write) and the user listings
// of contract §8: GET /api/v1/users and GET /api/v1/organizations/{id}/users (users:read).
// Events user.created, user.updated, user.deleted.
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_user_routes(server::App& app);

}  // namespace portcullis::api_worker
