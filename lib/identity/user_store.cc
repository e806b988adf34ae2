#include "identity/user_store.h"

#include "core/ids.h"
#include "core/time.h"
#include "format/json.h"
#include "format/json_strings.h"
#include "format/metadata.h"
#include "format/text.h"
#include "identity/email_address.h"
#include "identity/session_store.h"
#include "organizations/membership_store.h"
#include "paging/counter.h"
#include "tokens/consents.h"
#include "tokens/grant_revocation.h"

namespace portcullis::identity {
namespace {

Status invalid(std::string message) {
  return Status::invalid_argument(std::move(message));
}

std::string select_users() {
  return "SELECT " + user_columns("u") + " FROM users u ";
}

Status check_text(const std::optional<std::string>& value, const char* field, size_t max_chars) {
  return value ? text::check_display_text(*value, field, max_chars, false) : Status::ok();
}

Status validate(const User& u) {
  PORTCULLIS_RETURN_IF_ERROR(check_text(u.given_name, "given_name", kMaxNameChars));
  PORTCULLIS_RETURN_IF_ERROR(check_text(u.family_name, "family_name", kMaxNameChars));
  PORTCULLIS_RETURN_IF_ERROR(check_text(u.display_name, "display_name", kMaxDisplayNameChars));
  PORTCULLIS_RETURN_IF_ERROR(check_text(u.external_id, "external_id", kMaxExternalIdChars));
  if (u.external_id && u.external_id->empty()) return invalid("external_id must not be empty");
  return format::check_metadata(u.metadata);
}

// Applies `f` to `u`; the e-mail address is normalised on the way.
Status apply(User& u, const UserFields& f) {
  if (f.email) {
    auto normalized = normalize_email(*f.email);
    if (!normalized) return invalid("email: " + normalized.status().message());
    u.email = *normalized;
  }
  if (f.email_verified) u.email_verified = *f.email_verified;
  if (f.active) u.active = *f.active;
  if (f.given_name) u.given_name = *f.given_name;
  if (f.family_name) u.family_name = *f.family_name;
  if (f.display_name) u.display_name = *f.display_name;
  if (f.external_id) u.external_id = *f.external_id;
  if (f.metadata) u.metadata = *f.metadata;
  if (f.environment_roles) {
    PORTCULLIS_RETURN_IF_ERROR(check_environment_roles(*f.environment_roles));
    u.environment_roles = *f.environment_roles;
  }
  return validate(u);
}

// A user provisioned without an address (UserStore::create_without_email) has NULL there.
store::Value email_value(const User& u) {
  if (u.email.empty()) return nullptr;
  return u.email;
}

Status duplicate_email(const Status& st) {
  if (st.code() != Code::kAlreadyExists) return st;
  return Status::already_exists("another user already has this email address");
}

// NULL when the user holds no environment role: the common case costs nothing.
store::Value roles_value(const User& u) {
  if (u.environment_roles.empty()) return nullptr;
  Json::Value roles(Json::arrayValue);
  for (const auto& r : u.environment_roles) roles.append(r);
  return json::write(roles);
}

std::vector<std::string> roles_from(const std::optional<std::string>& stored) {
  std::vector<std::string> roles;
  if (!stored) return roles;
  auto parsed = json::parse(*stored);
  if (!parsed) return roles;
  return json::string_elements(*parsed);
}

}  // namespace

Status check_environment_roles(const std::vector<std::string>& roles) {
  for (size_t i = 0; i < roles.size(); ++i) {
    if (roles[i] != kEnvironmentAdminRole) {
      return invalid("environment_roles: unknown role " + roles[i].substr(0, 64) +
                     " (the environment roles are: admin)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (roles[j] == roles[i]) return invalid("environment_roles: " + roles[i] + " is repeated");
    }
  }
  return Status::ok();
}

bool User::is_environment_admin() const {
  for (const auto& r : environment_roles) {
    if (r == kEnvironmentAdminRole) return true;
  }
  return false;
}

std::string user_columns(std::string_view alias) {
  std::string a(alias);
  return a + ".id, " + a + ".email, " + a + ".email_verified, " + a + ".active, " + a +
         ".given_name, " + a + ".family_name, " + a + ".display_name, " + a + ".external_id, " + a +
         ".metadata, " + a + ".create_time, " + a + ".update_time, " + a + ".environment_roles";
}

User user_from_row(const store::Row& r, size_t first) {
  User u;
  u.id = r.str(first);
  u.email = r.str(first + 1);
  u.email_verified = r.boolean(first + 2);
  u.active = r.boolean(first + 3);
  u.given_name = r.opt(first + 4);
  u.family_name = r.opt(first + 5);
  u.display_name = r.opt(first + 6);
  u.external_id = r.opt(first + 7);
  u.metadata = format::parse_stored_metadata(r.str(first + 8));
  u.create_time = db_time_to_rfc3339(r.str(first + 9));
  u.update_time = db_time_to_rfc3339(r.str(first + 10));
  u.environment_roles = roles_from(r.opt(first + 11));
  return u;
}

Result<std::optional<User>> UserStore::find_by_email(const std::string& email) {
  // users.email is utf8mb4_unicode_ci: case-insensitive as required, but it also equates
  // accented letters and ignores trailing spaces. The row must therefore match in our own,
  // narrower sense too, or "jose@" could sign in as "josé@".
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                              db_.query(select_users() + "WHERE u.email = ?", {email}));
  if (rows.empty()) return std::optional<User>();
  User user = user_from_row(rows[0], 0);
  if (email_key(user.email) != email_key(email)) {
    return Status::failed_precondition("another account's address is too similar to this one");
  }
  return std::optional<User>(std::move(user));
}

Status UserStore::insert(const User& u) {
  // create_time is the listing's order; it is set here once and never changes (memberships
  // keep a copy of it for the organization listing).
  std::string created = db_now();
  return db_.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("INSERT INTO users (id, email, email_verified, active, given_name, "
                    "family_name, display_name, external_id, metadata, create_time, update_time, "
                    "environment_roles) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    {u.id, email_value(u), u.email_verified, u.active,
                     store::nullable(u.given_name), store::nullable(u.family_name),
                     store::nullable(u.display_name), store::nullable(u.external_id),
                     json::write(u.metadata), created, created, roles_value(u)})
            .status());
    return paging::add_to_count(db_, paging::kEnvironmentUsers, u.id, 1);
  });
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
  User user;
  user.id = new_id("usr_");
  user.email = email;
  user.email_verified = true;
  Status inserted = insert(user);
  if (inserted.is_ok()) return get(user.id);
  if (inserted.code() != Code::kAlreadyExists) return inserted;
  // Two first sign-ins of the same address raced; the other one created the user.
  PORTCULLIS_ASSIGN_OR_RETURN(found, find_by_email(email));
  if (!found) return Status::unavailable("the user could not be created; try again");
  return *found;
}

Result<User> UserStore::get(const std::string& id) {
  if (!is_valid_id(id, "usr_")) return Status::not_found("no user " + id);
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(select_users() + "WHERE u.id = ?", {id}));
  if (rows.empty()) return Status::not_found("no user " + id);
  return user_from_row(rows[0], 0);
}

Result<User> UserStore::create(const UserFields& fields) {
  if (!fields.email) return invalid("email is required");
  User u;
  PORTCULLIS_RETURN_IF_ERROR(apply(u, fields));
  u.id = new_id("usr_");
  Status inserted = insert(u);
  if (!inserted.is_ok()) return duplicate_email(inserted);
  return get(u.id);
}

Result<User> UserStore::create_without_email(const UserFields& fields) {
  if (fields.email) return invalid("create_without_email takes no email");
  User u;
  PORTCULLIS_RETURN_IF_ERROR(apply(u, fields));
  u.id = new_id("usr_");
  PORTCULLIS_RETURN_IF_ERROR(insert(u));
  return get(u.id);
}

Result<User> UserStore::update(const std::string& id, const UserFields& changes) {
  if (!is_valid_id(id, "usr_")) return Status::not_found("no user " + id);
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                                db_.query(select_users() + "WHERE u.id = ? FOR UPDATE", {id}));
    if (rows.empty()) return Status::not_found("no user " + id);
    User u = user_from_row(rows[0], 0);
    bool was_active = u.active;
    PORTCULLIS_RETURN_IF_ERROR(apply(u, changes));
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("UPDATE users SET email = ?, email_verified = ?, active = ?, given_name = ?, "
                    "family_name = ?, display_name = ?, external_id = ?, metadata = ?, "
                    "environment_roles = ?, update_time = ? WHERE id = ?",
                    {email_value(u), u.email_verified, u.active, store::nullable(u.given_name),
                     store::nullable(u.family_name), store::nullable(u.display_name),
                     store::nullable(u.external_id), json::write(u.metadata), roles_value(u),
                     db_now(), id})
            .status());
    if (was_active && !u.active) {
      int64_t now = unix_now();
      PORTCULLIS_RETURN_IF_ERROR(SessionStore::revoke_all_for_user(db_, id, now));
      PORTCULLIS_RETURN_IF_ERROR(
          oauth::revoke_all_grants(db_, oauth::GrantsOf::kUser, id, "user_deactivated", now));
    }
    return Status::ok();
  });
  if (!st.is_ok()) return duplicate_email(st);
  return get(id);
}

Status UserStore::remove(const std::string& id) {
  if (!is_valid_id(id, "usr_")) return Status::not_found("no user " + id);
  int64_t now = unix_now();
  return db_.transaction([&]() -> Status {
    // The row lock orders this delete after any membership change in flight (they read the
    // user with a shared lock), so no membership outlives its user.
    PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                                db_.query("SELECT id FROM users WHERE id = ? FOR UPDATE", {id}));
    if (rows.empty()) return Status::not_found("no user " + id);
    PORTCULLIS_RETURN_IF_ERROR(organizations::MembershipStore(db_).remove_all_of_user(id));
    // The grants are revoked, never deleted here: validators learn of the revocation from the
    // grant rows, which GrantStore::prune removes once no access token they cover is valid.
    PORTCULLIS_RETURN_IF_ERROR(oauth::revoke_grants_of_deleted_user(db_, id, now));
    PORTCULLIS_RETURN_IF_ERROR(SessionStore::remove_all_for_user(db_, id));
    PORTCULLIS_RETURN_IF_ERROR(oauth::ConsentStore(db_).remove_all_of_user(id));
    PORTCULLIS_RETURN_IF_ERROR(db_.execute("DELETE FROM users WHERE id = ?", {id}).status());
    return paging::add_to_count(db_, paging::kEnvironmentUsers, id, -1);
  });
}

Result<std::vector<User>> UserStore::search_by_email_prefix(const std::string& prefix, int limit) {
  std::string pattern;
  for (char c : prefix.substr(0, 320)) {
    if (c == '%' || c == '_' || c == '\\') pattern += '\\';
    pattern += c;
  }
  pattern += '%';
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows, db_.query(select_users() + "WHERE u.email LIKE ? ORDER BY u.email LIMIT ?",
                                  {pattern, static_cast<int64_t>(limit)}));
  std::vector<User> out;
  for (const auto& r : rows) out.push_back(user_from_row(r, 0));
  return out;
}

Result<paging::Page<User>> UserStore::list(const paging::PageRequest& request,
                                           const paging::TokenCodec& codec) {
  paging::KeysetQuery query{
      .columns = user_columns("u"),
      .from = "users u",
      .time_column = "u.create_time",
      .id_column = "u.id",
      .total = [this] { return paging::read_count(db_, paging::kEnvironmentUsers); }};
  return paging::fetch_page_as<User>(
      db_, query, request, codec,
      [](const store::Row& r) -> Result<User> { return user_from_row(r, 0); });
}

}  // namespace portcullis::identity
