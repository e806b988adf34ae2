#include "identity/identity_store.h"

#include "core/time.h"

namespace portcullis::identity {

Result<std::optional<std::string>> IdentityStore::user_of(const std::string& realm,
                                                          const std::string& subject) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT user_id FROM user_identities WHERE realm = ? AND subject = ?",
                {realm, subject}));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].str(0));
}

Status IdentityStore::link(const std::string& user_id, const Identity& identity) {
  if (identity.realm.empty() || identity.realm.size() > 255 || identity.subject.empty() ||
      identity.subject.size() > 255) {
    return Status::invalid_argument("an identity needs a realm and a subject of 1..255 bytes");
  }
  store::Value connection =
      identity.connection_id.empty() ? store::Value(nullptr) : store::Value(identity.connection_id);
  auto inserted = db_.execute(
      "INSERT INTO user_identities (realm, subject, user_id, provider, "
      "connection_id, create_time) VALUES (?, ?, ?, ?, ?, ?)",
      {identity.realm, identity.subject, user_id, identity.provider, connection, db_now()});
  if (inserted) return Status::ok();
  if (inserted.status().code() != Code::kAlreadyExists) return inserted.status();
  // Linked already (a racing sign-in of the same account): fine when to this user.
  PORTCULLIS_ASSIGN_OR_RETURN(auto owner, user_of(identity.realm, identity.subject));
  if (owner && *owner == user_id) return Status::ok();
  return Status::already_exists("the account is linked to another user");
}

Result<std::map<std::string, std::vector<Identity>>> IdentityStore::of_users(
    const std::vector<std::string>& user_ids) {
  std::map<std::string, std::vector<Identity>> out;
  if (user_ids.empty()) return out;
  store::Params params(user_ids.begin(), user_ids.end());
  const std::string list = store::in_list(params, user_ids.size());
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT user_id, realm, subject, provider, connection_id, create_time FROM "
                "user_identities WHERE user_id IN (" +
                    list + ") ORDER BY user_id, create_time, realm, subject",
                params));
  for (const auto& r : rows) {
    Identity i;
    i.realm = r.str(1);
    i.subject = r.str(2);
    i.provider = r.str(3);
    if (!r.is_null(4)) i.connection_id = r.str(4);
    i.create_time = db_time_to_rfc3339(r.str(5));
    out[r.str(0)].push_back(std::move(i));
  }
  return out;
}

}  // namespace portcullis::identity
