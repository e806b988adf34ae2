// Remembered consent (contract §3): per user, client and resource, the scopes granted so far. A
// request whose scopes are all covered skips the consent page unless prompt=consent.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::oauth {

class ConsentStore {
 public:
  explicit ConsentStore(store::Db& db) : db_(db) {}

  Result<bool> covers(const std::string& user_id, const std::string& client_id,
                      const std::string& resource_id, const std::vector<std::string>& scopes);

  // For a read of another store that joins consents (identity::SessionStore::current): the
  // value of consents.client_key for a client, and whether a consent row's `scopes` as read
  // (nullopt: no row, never consented, even to nothing) covers `scopes`.
  static std::string client_key(const std::string& client_id);
  static bool stored_scopes_cover(const std::optional<std::string>& stored,
                                  const std::vector<std::string>& scopes);
  // Adds `scopes` to what the user granted this client for this resource.
  Status remember(const std::string& user_id, const std::string& client_id,
                  const std::string& resource_id, const std::vector<std::string>& scopes);
  // The deletion cascades: every consent of a user, a client or a resource. Call inside the
  // transaction that deletes the owner.
  Status remove_all_of_user(const std::string& user_id);
  Status remove_all_of_client(const std::string& client_id);
  Status remove_all_of_resource(const std::string& resource_id);

 private:
  // The row's `scopes`; nullopt when the user never consented to this client for this resource.
  Result<std::optional<std::string>> stored_scopes(const std::string& user_id,
                                                   const std::string& client_id,
                                                   const std::string& resource_id);
  // nullopt when the user never consented to this client for this resource.
  Result<std::optional<std::set<std::string>>> granted(const std::string& user_id,
                                                       const std::string& client_id,
                                                       const std::string& resource_id);
  store::Db& db_;
};

}  // namespace portcullis::oauth
