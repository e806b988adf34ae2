// Memberships: a user's place in one organization (contract §7, §8), with roles, metadata, a
// status (active | inactive | pending), the join time and who provisioned it (scim | sso | api).
//
// This is the only writer of the `memberships` table: every insert and delete also changes the
// organization's member count (paging/counter.h) in the same transaction, which is what keeps
// the organization listing's total_size exact. SCIM and SSO provisioning use it too.
#pragma once

#include <json/value.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::organizations {

inline constexpr size_t kMaxRoles = 50;
inline constexpr size_t kMaxRoleNameChars = 64;

struct Membership {
  std::string organization_id;
  std::string user_id;
  std::vector<std::string> roles;  // role names
  Json::Value metadata = Json::Value(Json::objectValue);
  std::string status = "active";       // active | inactive | pending
  std::string provisioned_by = "api";  // scim | sso | api
  std::string join_time;               // RFC 3339
  std::string update_time;             // RFC 3339
};

// What a PUT sets; absent members take their defaults (no roles, {}, active).
struct MembershipFields {
  std::vector<std::string> roles;
  Json::Value metadata = Json::Value(Json::objectValue);
  std::string status = "active";
};

// InvalidArgument for a role name that is not 1..64 of letters, digits and `_ . : -` starting
// with a letter or digit, for too many or repeated roles, a bad status or bad metadata.
Status check_membership_fields(const MembershipFields& fields);

// The membership columns of the table aliased `alias`, in the order membership_from_row reads
// them, for queries that join memberships to something else.
std::string membership_columns(std::string_view alias);
// A membership from `row`, starting at cell `first`.
Membership membership_from_row(const store::Row& row, size_t first);

class MembershipStore {
 public:
  explicit MembershipStore(store::Db& db) : db_(db) {}

  struct Put {
    Membership membership;
    bool created = false;
  };
  // Creates the membership, or replaces its roles, metadata and status (keeping join_time and
  // provisioned_by). An active membership made inactive or pending revokes the grants held
  // through the organization, as remove does. InvalidArgument for bad fields or a malformed
  // organization id; NotFound when the organization or the user does not exist.
  Result<Put> put(const std::string& organization_id, const std::string& user_id,
                  const MembershipFields& fields, std::string_view provisioned_by);
  // NotFound when there is no such membership.
  Status remove(const std::string& organization_id, const std::string& user_id);
  // Every membership of a user, removed with their counts. REQUIRES: inside the transaction
  // that deletes the user, after the user's row was locked.
  Status remove_all_of_user(const std::string& user_id);
  // Every membership of a deleted organization (its listing count is dropped with it).
  // REQUIRES: inside the transaction that deletes the organization, after its row was locked.
  Status remove_all_of_organization(const std::string& organization_id);

  // The status of the user's membership of the organization (active, inactive, pending);
  // nullopt when there is none. Reads the user's memberships (of_users): a user has few.
  Result<std::optional<std::string>> status_of(const std::string& organization_id,
                                               const std::string& user_id);

  // The memberships of each of `user_ids` (users without any are absent from the map), each
  // user's in join order.
  Result<std::map<std::string, std::vector<Membership>>> of_users(
      const std::vector<std::string>& user_ids);

 private:
  store::Db& db_;
};

}  // namespace portcullis::organizations
