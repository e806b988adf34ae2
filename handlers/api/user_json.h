// The JSON of users and memberships (contract §8), shared by the user, membership and listing
// endpoints so every one of them answers the same shape. Absent optional fields are left out,
// never null (contract §0).
#pragma once

#include <json/value.h>

#include <vector>

#include "core/status.h"
#include "identity/user_store.h"
#include "organizations/membership_store.h"

namespace portcullis::api_worker {

// {"organization_id","roles":[{"name"}],"status","join_time","metadata","provisioned_by"}
Json::Value membership_json(const organizations::Membership& m);
// The User object, with `memberships` as given.
Json::Value user_json(const identity::User& u,
                      const std::vector<organizations::Membership>& memberships);

// The writable fields of a user in a POST body or a PATCH (RFC 7396 merge patch: `null`
// clears an optional field or puts a flag back to its default). Read-only members (id,
// create_time, update_time, memberships) are ignored, so a GET body can be sent back.
Result<identity::UserFields> read_user_fields(const Json::Value& body);

// A PUT membership body: {"roles":[{"name"}],"metadata":{},"status"}; absent = defaults.
Result<organizations::MembershipFields> read_membership_fields(const Json::Value& body);

}  // namespace portcullis::api_worker
