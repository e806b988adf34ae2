// Environment users as sign-in sees them (table `users`, contract §8): found or created by a
// verified e-mail address. SCIM and the management API keep the other fields.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::identity {

struct User {
  std::string id;  // usr_…
  std::string email;
  bool email_verified = false;
  bool active = true;  // a deactivated user cannot sign in
};

class UserStore {
 public:
  explicit UserStore(store::Db& db) : db_(db) {}

  // The user owning `email` (compared case-insensitively), created when there is none, with
  // the address marked verified. REQUIRES: `email` came from normalize_email() and the person
  // signing in just proved they receive mail at it. The caller checks `active`.
  // FailedPrecondition when the database holds a different address it considers equal (its
  // collation folds accents): signing in as someone else's look-alike address is refused.
  Result<User> find_or_create_by_verified_email(const std::string& email);

  // NotFound when there is no such user.
  Result<User> get(const std::string& id);

 private:
  Result<std::optional<User>> find_by_email(const std::string& email);

  store::Db& db_;
};

}  // namespace portcullis::identity
