// POST /resources/{resource_id}/client_register: RFC 7591 dynamic client registration
// (contract §2.1), and the housekeeping that goes with it: DCR clients left unused are pruned
// by a periodic task of this worker (and by `portcullis oauth-clients prune`).
#pragma once

#include "server/app.h"

namespace portcullis::oauth_worker {

void install_registration(server::App& app);

}  // namespace portcullis::oauth_worker
