// The only writer of social_connections. The client secret is sealed with the master key
// (crypto/aead.h), bound to the connection's id, and opened only to call the provider.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "crypto/aead.h"
#include "paging/keyset.h"
#include "social/connection.h"
#include "store/db.h"

namespace portcullis::social {

class SocialConnectionStore {
 public:
  SocialConnectionStore(store::Db& db, const crypto::MasterKey& master_key)
      : db_(db), master_key_(master_key) {}

  // Assigns id and times and stores `c` with its secret (sealed).
  Status create(SocialConnection& c, const std::string& client_secret);
  // NotFound when unknown (or not even a soc_ id).
  Result<SocialConnection> get(const std::string& id);
  Result<paging::Page<SocialConnection>> list(const paging::PageRequest& request,
                                              const paging::TokenCodec& codec);
  static paging::Listing listing() { return paging::Listing{"social_connections", ""}; }
  // The enabled ones, oldest first: the login page's buttons.
  Result<std::vector<SocialConnection>> enabled();
  // Stores every field of `c`; the secret only when one is given.
  Status update(SocialConnection& c, const std::optional<std::string>& client_secret);
  Status remove(const std::string& id);
  // The client secret in the clear, to authenticate to the provider's token endpoint.
  Result<std::string> client_secret(const SocialConnection& c);

 private:
  store::Db& db_;
  const crypto::MasterKey& master_key_;
};

}  // namespace portcullis::social
