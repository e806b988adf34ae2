#include "identity/user_store.h"

#include "core/ids.h"
#include "core/time.h"
#include "identity/email_address.h"

namespace portcullis::identity {
namespace {

constexpr const char* kUserColumns = "SELECT id, email, email_verified, active FROM users ";

User user_from(const store::Row& row) {
  return User{row.str(0), row.str(1), row.boolean(2), row.boolean(3)};
}

}  // namespace

Result<std::optional<User>> UserStore::find_by_email(const std::string& email) {
  // users.email is utf8mb4_unicode_ci: case-insensitive as required, but it also equates
  // accented letters and ignores trailing spaces. The row must therefore match in our own,
  // narrower sense too, or "jose@" could sign in as "josé@".
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                              db_.query(std::string(kUserColumns) + "WHERE email = ?", {email}));
  if (rows.empty()) return std::optional<User>();
  User user = user_from(rows[0]);
  if (email_key(user.email) != email_key(email)) {
    return Status::failed_precondition("another account's address is too similar to this one");
  }
  return std::optional<User>(std::move(user));
}

Result<User> UserStore::find_or_create_by_verified_email(const std::string& email) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<User> found, find_by_email(email));
  if (found) {
    if (!found->email_verified) {
      // Receiving the code proves the address: an account created unverified (API, SCIM)
      // becomes verified at its owner's first sign-in.
      PORTCULLIS_RETURN_IF_ERROR(
          db_.execute("UPDATE users SET email_verified = TRUE, update_time = ? WHERE id = ?",
                      {db_now(), found->id})
              .status());
      found->email_verified = true;
    }
    return *found;
  }
  User user{new_id("usr_"), email, true, true};
  std::string created = db_now();
  auto inserted = db_.execute(
      "INSERT INTO users (id, email, email_verified, active, metadata, create_time, "
      "update_time) VALUES (?, ?, TRUE, TRUE, '{}', ?, ?)",
      {user.id, email, created, created});
  if (inserted.is_ok()) return user;
  if (inserted.status().code() != Code::kAlreadyExists) return inserted.status();
  // Two first sign-ins of the same address raced; the other one created the user.
  PORTCULLIS_ASSIGN_OR_RETURN(found, find_by_email(email));
  if (!found) return Status::unavailable("the user could not be created; try again");
  return *found;
}

Result<User> UserStore::get(const std::string& id) {
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                              db_.query(std::string(kUserColumns) + "WHERE id = ?", {id}));
  if (rows.empty()) return Status::not_found("no such user");
  return user_from(rows[0]);
}

}  // namespace portcullis::identity
