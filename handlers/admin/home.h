#pragma once

#include "portal.h"

namespace portcullis::admin_worker {

// GET /admin
void install_home_routes(server::App& app);

}  // namespace portcullis::admin_worker
