// Revoking every grant of a resource, a client or a user at once: when the resource or the
// client is deleted, or the user deactivated — tokens of something that is gone must stop
// working.
// The grants are marked revoked (so their refresh tokens are refused), and their unexpired
// access tokens go on the deny-list that introspection and resource-server validators consult.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::oauth {

enum class GrantsOf { kResource, kClient, kUser };

// Call inside the transaction that deletes the owner, so both happen or neither does.
Status revoke_all_grants(store::Db& db, GrantsOf owner, const std::string& owner_id,
                         std::string_view reason, int64_t now);

}  // namespace portcullis::oauth
