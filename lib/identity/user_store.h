// Environment users (table `users`, contract §8): `usr_` ids, unique by e-mail address
// (compared case-insensitively). Sign-in finds or creates them by a verified address; the
// management API (and SCIM) create, change and delete them.
//
// This is the only writer of the `users` table: every insert and delete also changes the
// environment's user count (paging/counter.h) in the same transaction, which is what keeps
// GET /api/v1/users's total_size exact. A deleted user's memberships (with their counts),
// browser sessions, consents and grants go with them.
#pragma once

#include <json/value.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "paging/keyset.h"
#include "store/db.h"

namespace portcullis::identity {

inline constexpr size_t kMaxNameChars = 200;
inline constexpr size_t kMaxDisplayNameChars = 400;
inline constexpr size_t kMaxExternalIdChars = 255;

// The environment roles a user may hold (docs/admin.md): `admin` is an environment
// administrator, who may use every page of the admin portal.
inline constexpr std::string_view kEnvironmentAdminRole = "admin";
// InvalidArgument for a role that is not one of the environment roles, or a repeated one.
Status check_environment_roles(const std::vector<std::string>& roles);

struct User {
  std::string id;  // usr_…
  std::string email;
  bool email_verified = false;
  bool active = true;  // a deactivated user cannot sign in
  std::optional<std::string> given_name;
  std::optional<std::string> family_name;
  std::optional<std::string> display_name;
  std::optional<std::string> external_id;
  Json::Value metadata = Json::Value(Json::objectValue);
  std::vector<std::string> environment_roles;  // {"admin"} or none
  std::string create_time;                     // RFC 3339
  std::string update_time;                     // RFC 3339

  bool is_environment_admin() const;
};

// The writable fields; nullopt leaves a field as it is (PATCH) or at its default (create,
// where email is required). An inner nullopt clears an optional field.
struct UserFields {
  std::optional<std::string> email;
  std::optional<bool> email_verified;
  std::optional<bool> active;
  std::optional<std::optional<std::string>> given_name;
  std::optional<std::optional<std::string>> family_name;
  std::optional<std::optional<std::string>> display_name;
  std::optional<std::optional<std::string>> external_id;
  std::optional<Json::Value> metadata;
  std::optional<std::vector<std::string>> environment_roles;
};

// The user columns of the table aliased `alias`, in the order user_from_row reads them, for
// queries that join users to something else.
std::string user_columns(std::string_view alias);
inline constexpr size_t kUserColumnCount = 12;
// A user from `row`, starting at cell `first`.
User user_from_row(const store::Row& row, size_t first);

class UserStore {
 public:
  explicit UserStore(store::Db& db) : db_(db) {}

  // The user owning `email` (compared case-insensitively), created when there is none, with
  // the address marked verified. REQUIRES: `email` came from normalize_email() and the person
  // signing in just proved they receive mail at it. The caller checks `active`.
  // FailedPrecondition when the database holds a different address it considers equal (its
  // collation folds accents): signing in as someone else's look-alike address is refused.
  Result<User> find_or_create_by_verified_email(const std::string& email);

  // NotFound when there is no such user (or the id is malformed), for every method.
  Result<User> get(const std::string& id);
  // InvalidArgument for a bad field, AlreadyExists when another user has the address.
  Result<User> create(const UserFields& fields);
  // A user with no e-mail address (SCIM provisioning, when the directory's address belongs to
  // a user the organization may not link to: contract §9). Sign-in never finds such a user.
  Result<User> create_without_email(const UserFields& fields);
  // Deactivating (active true → false) also ends the user's browser sessions and revokes
  // their grants, in the same transaction.
  Result<User> update(const std::string& id, const UserFields& changes);
  Status remove(const std::string& id);

  // The admin portal's search: users whose address starts with `prefix` (compared as the
  // address column compares, case-insensitively), in address order, at most `limit`. One range
  // read of the unique address index, whatever the number of users.
  Result<std::vector<User>> search_by_email_prefix(const std::string& prefix, int limit);

  // GET /api/v1/users: every user, paged (paging/keyset.h); total_size from the counter.
  Result<paging::Page<User>> list(const paging::PageRequest& request,
                                  const paging::TokenCodec& codec);
  static paging::Listing listing() { return paging::Listing{"users", ""}; }

 private:
  Result<std::optional<User>> find_by_email(const std::string& email);
  // The one INSERT of a user, with its count.
  Status insert(const User& user);

  store::Db& db_;
};

}  // namespace portcullis::identity
