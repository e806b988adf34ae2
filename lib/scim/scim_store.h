// SCIM users and groups of an organization (contract §9). ScimStore is the only writer of
// scim_users, scim_groups and scim_group_members; environment users and memberships are
// changed through their own stores (identity::UserStore, organizations::MembershipStore), in
// the same transaction.
//
// Semantics:
//  - userName / group displayName are unique per organization case-insensitively (409
//    uniqueness), stored and returned exactly as sent. The unique keys decide races: ten
//    identical POSTs at once give one 201 and nine 409s.
//  - A create links to an existing environment user with the same e-mail address only when
//    that address's domain is a verified domain of the organization; otherwise it creates a new
//    environment user (without the address when another user holds it), so no organization can
//    take over another's user.
//  - active:false deactivates the environment user (ending their browser sessions and revoking
//    their grants, so resource servers refuse their access tokens at the next deny-list sync)
//    and makes the membership `inactive`; active:true reverses both.
//  - DELETE removes the SCIM user, their group memberships and the organization membership and
//    frees the userName, and ends the user's access at once: an environment user this directory
//    created (not linked) and that belongs nowhere else is deleted with every session and grant
//    (UserStore::remove); any other keeps its account but loses its sessions and grants, as on
//    deactivation, so resource servers refuse its access tokens at the next deny-list sync.
//  - Lists: totalResults of an unfiltered list is a counter (lib/paging/counter.h). A user list
//    page (any filter, any sortBy) that follows a page served before (startIndex = previous
//    start + count, Okta's import) seeks from the key where that page ended (table
//    scim_list_marks: sort value, creation time, id) instead of skipping startIndex rows, so
//    every page costs the same however deep; when the organization's SCIM data changed since
//    (its write count), it still goes on after that row, so a walk sees every user exactly once
//    while users are added and removed (one whose sort value changes meanwhile may cross the
//    cursor). Any other page starts from the nearest mark of the
//    current write count; without one, an unfiltered page in creation order starts from the
//    nearest checkpoint (table scim_list_checkpoints: the key of every checkpoint_every-th user,
//    made by run_checkpoint_job as the directory grows or on the first jump past it, and moved
//    by every create and delete before it, so never
//    stale; those of an earlier interval stay exact) and skips fewer than checkpoint_every rows
//    of the covering list index; other lists skip rows from their start. Group lists skip rows.
//  - Every change bumps `version`; callers' If-Match values are checked inside the transaction
//    (FailedPrecondition with reason "versionMismatch").
#pragma once

#include <json/value.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "scim/filter_sql.h"
#include "scim/patch.h"
#include "scim/resource.h"
#include "store/db.h"

namespace portcullis::scim {

inline constexpr int64_t kMaxResults = 200;
// Members one request may name (group POST/PUT, or all the PATCH operations of one request
// together): larger changes are several PATCH add/remove requests. docs/scim.md "Limits".
inline constexpr size_t kMaxMembersPerRequest = 20000;
// Rows between two checkpoints of a user list by default (a cold jump skips fewer than this
// many); the worker's is config::Config::scim_checkpoint_every (PORTCULLIS_SCIM_CHECKPOINT_EVERY).
inline constexpr int64_t kCheckpointEvery = 10000;
// A page that follows a page served before the directory changed continues that walk when it
// comes within this many seconds of it (docs/scim.md §7).
inline constexpr int64_t kWalkPauseSeconds = 600;

struct ScimUser {
  std::string id;  // usr_…
  std::string organization_id;
  std::string directory_id;
  Json::Value attributes;  // canonical (resource.h)
  bool active = true;
  int64_t version = 1;
  std::string create_time;  // RFC 3339
  std::string update_time;
  std::vector<std::pair<std::string, std::string>> groups;  // (grp_ id, displayName)
};

struct ScimGroup {
  std::string id;  // grp_…
  std::string organization_id;
  std::string directory_id;
  std::string display_name;
  std::optional<std::string> external_id;
  int64_t version = 1;
  std::string create_time;
  std::string update_time;
  bool members_loaded = false;
  std::vector<std::pair<std::string, std::string>> members;  // (usr_ id, userName)
};

std::string etag(int64_t version);

struct ListQuery {
  std::optional<SqlCondition> filter;
  std::string sort_expression;  // empty = creation order
  bool descending = false;
  int64_t start_index = 1;  // 1-based
  int64_t count = 100;
  bool with_members = true;  // groups
};

template <typename T>
struct ListResult {
  int64_t total = 0;
  std::vector<T> items;
};

// What a user write changed, for the events.
struct UserChange {
  ScimUser user;
  bool changed = false;
  bool deactivated = false;
  bool reactivated = false;
  std::vector<std::string> fields;  // top-level attributes that changed (names only), sorted
};

struct GroupChange {
  ScimGroup group;
  bool changed = false;
  std::vector<std::string> fields;  // of displayName, externalId, members
};

// The SCIM groups each of `user_ids` belongs to, in any organization (the listing API shows
// them in the user's membership of that organization).
struct UserGroup {
  std::string organization_id;
  std::string group_id;
  std::string display_name;
};
Result<std::map<std::string, std::vector<UserGroup>>> groups_of_users(
    store::Db& db, const std::vector<std::string>& user_ids);

// After the organization's scim_group_roles changed from `previous` (in the same transaction):
// the members of every group either mapping names hold exactly the roles the new mapping gives
// them; roles only the previous mapping named are taken from members no longer entitled. Up to
// kMaxRoleReevaluation members this is done at once; beyond, it is queued (table
// scim_role_jobs, in the same transaction) for run_role_job, which the portcullis-webhooks
// background process calls: never inside a request.
inline constexpr size_t kMaxRoleReevaluation = 5000;
// Members one run_role_job call re-evaluates (one transaction).
inline constexpr size_t kRoleJobSlice = 500;
// The organization's scim_group_roles, its row locked until the transaction ends (read it
// before the update, then call reapply_group_roles).
Result<Json::Value> lock_group_roles(store::Db& db, const std::string& organization_id);
Status reapply_group_roles(store::Db& db, const std::string& organization_id,
                           const Json::Value& previous);
// One slice (kRoleJobSlice members) of the oldest queued role re-evaluation not being run
// elsewhere (SELECT … FOR UPDATE SKIP LOCKED: any number of processes share the work); the job
// is done when a slice comes up short. False when there was nothing to do.
Result<bool> run_role_job(store::Db& db);
// Background upkeep of the list checkpoints (scim_list_checkpoints), so that a jump deep into a
// directory that grew through SCIM finds them made: one hop of `checkpoint_every` users, writing
// the next checkpoint of one organization whose users reach two intervals past its last one (the
// interval just before the end, where creates land, is left to the jumps). Any number of
// processes may run it: a hop takes share locks on the rows it passes, and writing a checkpoint
// twice writes the same position. False when no organization needed one.
Result<bool> run_checkpoint_job(store::Db& db, int64_t checkpoint_every);

// The management API deletes an environment user (before identity::UserStore::remove, in its
// transaction): every organization's SCIM record of the user goes, with its group memberships
// (those groups' versions move), its e-mail index rows, the list counter and checkpoints.
Status forget_user(store::Db& db, const std::string& user_id);
// The same for one organization: the user's SCIM records there (a membership deleted through
// the management API), in the caller's transaction when there is one.
Status forget_membership(store::Db& db, const std::string& organization_id,
                         const std::string& user_id);
// The management API deletes an organization (after organizations::OrganizationStore::remove,
// in its transaction): its directories and tokens, SCIM users, groups, list marks, checkpoints
// and counters go. The environment users stay, as they do for any deleted organization.
Status forget_organization(store::Db& db, const std::string& organization_id);

// The organization's SCIM user whose externalId is exactly `external_id` (an enterprise SSO
// sign-in's subject or mapped attribute, lib/sso/provisioning.h): nullopt when there is none or
// more than one.
struct ExternalIdMatch {
  std::string user_id;
  bool active = true;
};
Result<std::optional<ExternalIdMatch>> find_by_external_id(store::Db& db,
                                                           const std::string& organization_id,
                                                           const std::string& external_id);

class ScimStore {
 public:
  ScimStore(store::Db& db, std::string organization_id, std::string directory_id,
            int64_t checkpoint_every = kCheckpointEvery)
      : db_(db),
        organization_id_(std::move(organization_id)),
        directory_id_(std::move(directory_id)),
        checkpoint_every_(std::max<int64_t>(2, checkpoint_every)) {}

  Result<ScimUser> create_user(const Json::Value& attributes);
  Result<ScimUser> get_user(const std::string& id);
  Result<UserChange> replace_user(const std::string& id, const Json::Value& attributes,
                                  const std::optional<std::string>& if_match);
  Result<UserChange> patch_user(const std::string& id, const std::vector<PatchOperation>& ops,
                                const std::optional<std::string>& if_match);
  // The deleted user as it was.
  Result<ScimUser> delete_user(const std::string& id, const std::optional<std::string>& if_match);
  Result<ListResult<ScimUser>> list_users(const ListQuery& query);

  Result<ScimGroup> create_group(const GroupInput& input);
  Result<ScimGroup> get_group(const std::string& id, bool with_members);
  Result<GroupChange> replace_group(const std::string& id, const GroupInput& input,
                                    const std::optional<std::string>& if_match);
  Result<GroupChange> patch_group(const std::string& id, const GroupPatch& plan,
                                  const std::optional<std::string>& if_match);
  // The deleted group as it was (without members).
  Result<ScimGroup> delete_group(const std::string& id, const std::optional<std::string>& if_match);
  Result<ListResult<ScimGroup>> list_groups(const ListQuery& query);

 private:
  // The user row locked for update; NotFound for ids outside the organization.
  Result<ScimUser> lock_user(const std::string& id);
  Result<ScimGroup> lock_group(const std::string& id);
  // Writes new attributes for a locked user and follows them into the environment user and
  // the membership.
  Result<UserChange> write_user(const ScimUser& before, Json::Value attributes);
  // One page of rows of `from` (aliased `alias`) in the organization, and the total count.
  Result<store::Rows> list_rows(const ListQuery& q, const std::string& from,
                                const std::string& alias, const std::string& columns,
                                const std::string& id_column, int64_t& total);
  // Users from rows of kUserColumns and kUserGroupsColumn (scim_store.cc), groups included.
  Result<std::vector<ScimUser>> users_from_rows(const store::Rows& rows);
  Status load_groups(std::vector<ScimUser>& users);
  Status load_members(ScimGroup& group);
  Status check_members(const std::vector<std::string>& user_ids);
  Status add_members(const std::string& group_id, const std::vector<std::string>& user_ids);
  Status remove_members(const std::string& group_id, const std::vector<std::string>& user_ids);
  Status set_membership_status(const std::string& user_id, bool active);
  // scim_user_emails: the user's emails[].value, lowered, for the emails filters' index.
  Status index_emails(const std::string& user_id, const Json::Value& attributes);
  // Counts a write of the organization's SCIM data (invalidates the list marks).
  Status count_write(const std::string& row_id);
  Result<int64_t> write_generation();
  // Removes the locked user's SCIM record (`create_time` as stored): group memberships (the
  // groups' versions move), e-mail index, checkpoints, counters. Not the environment user.
  Status remove_user_record(const std::string& user_id, const std::string& create_time);
  // forget_user (every organization: `organization_id` empty) and forget_membership.
  static Status forget_records(store::Db& db, const std::string& user_id,
                               const std::string& organization_id);
  friend Status forget_user(store::Db& db, const std::string& user_id);
  friend Status forget_membership(store::Db& db, const std::string& organization_id,
                                  const std::string& user_id);
  // Ends a deleted SCIM user's access (see DELETE above). Inside delete_user's transaction.
  Status deprovision(const std::string& user_id, bool created_user);
  Result<store::Rows> list_user_rows(const ListQuery& q, int64_t& total);
  // The row `target` rows into the organization's user list (creation order), from the nearest
  // checkpoint (scim_list_checkpoints) after (`position`, key); writes checkpoints on the way.
  Status seek_checkpoint(int64_t target, int64_t& position, std::string& from_time,
                         std::string& from_id);
  // A user row (key row_time, row_id) was inserted (+1) or deleted (-1): the checkpoints after it
  // move. Inside the transaction that writes the row.
  Status shift_checkpoints(const std::string& row_time, const std::string& row_id, int64_t delta);
  // The organization's scim_group_roles applied to these users' memberships: every role the
  // mapping names is held exactly when one of the user's groups maps to it; other roles stay.
  Status apply_group_roles(const std::vector<std::string>& user_ids,
                           const std::set<std::string>& also_managed = {});
  friend Status reapply_group_roles(store::Db& db, const std::string& organization_id,
                                    const Json::Value& previous);
  friend Result<bool> run_role_job(store::Db& db);
  friend Result<bool> run_checkpoint_job(store::Db& db, int64_t checkpoint_every);
  Result<std::vector<std::string>> member_ids(const std::string& group_id);

  store::Db& db_;
  std::string organization_id_;
  std::string directory_id_;
  int64_t checkpoint_every_;
};

}  // namespace portcullis::scim
