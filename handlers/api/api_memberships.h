// PUT/DELETE /api/v1/organizations/{id}/users/{user_id}: adding a user to an organization,
// replacing their membership, removing it (contract §7; organizations:write). Events
// organization.membership.created, .updated, .deleted.
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_membership_routes(server::App& app);

}  // namespace portcullis::api_worker
