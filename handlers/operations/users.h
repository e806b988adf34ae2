// Changes to users besides the store: the events (user.updated, user.deactivated,
// user.sessions.revoked). The management API and the admin portal both call these.
#pragma once

#include <string>
#include <vector>

#include "identity/user_store.h"
#include "server/app.h"

namespace portcullis::operations {

// `changed`: the names of the fields the caller sent (the event's `fields`). Deactivating also
// ends the user's sessions and revokes their grants (UserStore::update).
Result<identity::User> update_user(server::Context& ctx, const std::string& id,
                                   const identity::UserFields& fields,
                                   const std::vector<std::string>& changed);

// Signs the user out everywhere: their browser sessions (the sign-in pages' and the admin
// portal's) end and every grant is revoked, so their refresh tokens stop working and their
// tracked access tokens go on the deny-list.
Status revoke_user_sessions(server::Context& ctx, const std::string& user_id);

// Revokes one grant of the user (its refresh token and access tokens); NotFound unless the
// grant is the user's. Recorded as token.revoked with reason admin_revoked.
Status revoke_user_grant(server::Context& ctx, const std::string& user_id,
                         const std::string& grant_id);

}  // namespace portcullis::operations
