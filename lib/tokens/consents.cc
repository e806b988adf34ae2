#include "tokens/consents.h"

#include "core/time.h"
#include "crypto/hash.h"
#include "format/json.h"
#include "format/json_strings.h"

namespace portcullis::oauth {
std::string ConsentStore::client_key(const std::string& client_id) {
  return crypto::sha256(client_id);
}

bool ConsentStore::stored_scopes_cover(const std::optional<std::string>& stored,
                                       const std::vector<std::string>& scopes) {
  if (!stored) return false;  // never consented, even to nothing
  const std::set<std::string> have = json::string_set(*stored);
  for (const auto& s : scopes) {
    if (!have.count(s)) return false;
  }
  return true;
}

Result<std::optional<std::set<std::string>>> ConsentStore::granted(const std::string& user_id,
                                                                   const std::string& client_id,
                                                                   const std::string& resource_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<std::string> stored,
                              stored_scopes(user_id, client_id, resource_id));
  if (!stored) return std::optional<std::set<std::string>>();
  return std::optional<std::set<std::string>>(json::string_set(*stored));
}

Result<std::optional<std::string>> ConsentStore::stored_scopes(const std::string& user_id,
                                                               const std::string& client_id,
                                                               const std::string& resource_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT scopes FROM consents WHERE user_id = ? AND client_key = ? AND "
                "resource_id = ?",
                {user_id, client_key(client_id), resource_id}));
  if (rows.empty()) return std::optional<std::string>();
  return rows[0].opt(0);
}

Result<bool> ConsentStore::covers(const std::string& user_id, const std::string& client_id,
                                  const std::string& resource_id,
                                  const std::vector<std::string>& scopes) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<std::string> stored,
                              stored_scopes(user_id, client_id, resource_id));
  return stored_scopes_cover(stored, scopes);
}

Status ConsentStore::remember(const std::string& user_id, const std::string& client_id,
                              const std::string& resource_id,
                              const std::vector<std::string>& scopes) {
  return db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(auto had, granted(user_id, client_id, resource_id));
    std::set<std::string> have = had ? *had : std::set<std::string>();
    have.insert(scopes.begin(), scopes.end());
    Json::Value list(Json::arrayValue);
    for (const auto& s : have) list.append(s);
    return db_
        .execute(
            "INSERT INTO consents (user_id, client_key, resource_id, client_id, scopes, "
            "update_time) VALUES (?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE scopes = "
            "VALUES(scopes), update_time = VALUES(update_time)",
            {user_id, client_key(client_id), resource_id, client_id, json::write(list), db_now()})
        .status();
  });
}

Status ConsentStore::remove_all_of_user(const std::string& user_id) {
  return db_.execute("DELETE FROM consents WHERE user_id = ?", {user_id}).status();
}

Status ConsentStore::remove_all_of_client(const std::string& client_id) {
  return db_.execute("DELETE FROM consents WHERE client_key = ?", {client_key(client_id)}).status();
}

Status ConsentStore::remove_all_of_resource(const std::string& resource_id) {
  return db_.execute("DELETE FROM consents WHERE resource_id = ?", {resource_id}).status();
}

}  // namespace portcullis::oauth
