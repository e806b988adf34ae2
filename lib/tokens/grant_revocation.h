// The revocation cascades: every way a token's authority can end reaches the grants table here,
// inside the caller's transaction (the one that deletes or changes the owner), so both happen or
// neither does. Validators learn of revocations only from grant rows (validation/deny_list.h:
// the jti of every access token names its grant), so a revoked grant row is never deleted with
// its owner: it stays until GrantStore::prune, kRevokedGrantRetentionSeconds after revocation,
// when no access token it covers can still be valid anywhere.
//
//   user deleted            revoke_grants_of_deleted_user   (UserStore::remove)
//   user deactivated        revoke_all_grants(kUser)         (UserStore::update, active → false)
//   membership removed      revoke_grants_of_membership      (MembershipStore::remove)
//   membership deactivated  revoke_grants_of_membership      (MembershipStore::put, active →)
//   organization deleted    revoke_all_grants(kOrganization) (OrganizationStore::remove)
//   client deleted          revoke_all_grants(kClient)       (ClientStore::remove)
//   resource deleted        revoke_all_grants(kResource)     (ResourceStore::remove)
//   one grant revoked, refresh-token reuse, code replay      GrantStore::revoke (grants.h)
// Defined in grants.cc, the one writer of grants, refresh_tokens and access_tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::oauth {

// How long a revoked grant row must outlive its revocation: the longest access-token lifetime
// (access_token_ttl_seconds is at most 86400) plus the 60 s of clock skew validators allow.
inline constexpr int64_t kRevokedGrantRetentionSeconds = 86400 + 60;

enum class GrantsOf { kResource, kClient, kUser, kOrganization };

// Marks every live grant of the owner revoked (their refresh tokens are then refused) and puts
// their explicitly tracked access tokens on the deny-list. Call inside the owner's transaction.
Status revoke_all_grants(store::Db& db, GrantsOf owner, const std::string& owner_id,
                         std::string_view reason, int64_t now);

// The grants a user holds through one organization (their tokens carry that org_id): when the
// membership ends. Call inside the membership's transaction.
Status revoke_grants_of_membership(store::Db& db, const std::string& organization_id,
                                   const std::string& user_id, std::string_view reason,
                                   int64_t now);

// A deleted user: every grant revoked ("user_deleted") and its refresh tokens deleted; the grant
// rows stay, revoked, so every validator keeps refusing the user's live access tokens. Call
// inside the transaction that deletes the user.
Status revoke_grants_of_deleted_user(store::Db& db, const std::string& user_id, int64_t now);

}  // namespace portcullis::oauth
