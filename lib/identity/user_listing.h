// The user listings of contract §8: GET /api/v1/users (every user of the environment, each
// with all their memberships) and GET /api/v1/organizations/{id}/users (the organization's
// members, each with only that organization's membership).
//
// Both are keyset listings over (user create_time, user id) (paging/keyset.h): a page is one
// index range read plus LIMIT n+1 whatever its depth — the environment listing reads
// users(create_time, id), the organization listing memberships(organization_id,
// user_create_time, user_id) joined to users by primary key — and total_size is the
// maintained count of paging/counter.h, not a COUNT(*). docs/listing.md has the measurements.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "identity/user_store.h"
#include "organizations/membership_store.h"
#include "paging/keyset.h"
#include "store/db.h"

namespace portcullis::organizations {

struct ListedUser {
  identity::User user;
  std::vector<Membership> memberships;
};

// The listing an organization's page tokens are bound to: a token of one organization is
// refused by every other (and by the environment listing).
paging::Listing organization_users_listing(const std::string& organization_id);

// Every user, with all their memberships.
Result<paging::Page<ListedUser>> list_environment_users(store::Db& db,
                                                        const paging::PageRequest& request,
                                                        const paging::TokenCodec& codec);

// The members of `organization_id`, with that membership only. REQUIRES: a well-formed id
// (check_organization_id). NotFound when there is no such organization.
Result<paging::Page<ListedUser>> list_organization_users(store::Db& db,
                                                         const std::string& organization_id,
                                                         const paging::PageRequest& request,
                                                         const paging::TokenCodec& codec);

}  // namespace portcullis::organizations
