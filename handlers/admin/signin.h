// The portal's sign-in (admin/portal_signin.h), sign-out, and its static files.
#pragma once

#include "server/app.h"

namespace portcullis::admin_worker {

// GET /admin/login, GET /admin/callback, POST /admin/logout, GET /admin/signed-out.
void install_signin_routes(server::App& app);

}  // namespace portcullis::admin_worker
