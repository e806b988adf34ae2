// Management API clients: confidential clients that get management tokens through the
// client_credentials grant at the environment issuer. Secrets are 256-bit random values shown
// once; only their SHA-256 is stored (a slow hash adds nothing for secrets of full entropy and
// would put a CPU cost on every token request), and they are compared in constant time.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "paging/keyset.h"
#include "store/db.h"

namespace portcullis::management {

struct ApiClient {
  std::string id;  // api_…
  std::string name;
  std::set<std::string> scopes;
  std::string create_time;  // RFC 3339
};

struct NewApiClient {
  ApiClient client;
  std::string secret;  // shown once, never stored
};

class ApiClientStore {
 public:
  explicit ApiClientStore(store::Db& db) : db_(db) {}

  // REQUIRES: scopes are management scopes (see scopes.h). Name: 1..200 characters.
  Result<NewApiClient> create(const std::string& name, const std::set<std::string>& scopes);
  Result<ApiClient> get(const std::string& id);
  // Ok when the id names a client whose secret matches; Unauthenticated otherwise (the same
  // answer for an unknown client and a wrong secret).
  Result<ApiClient> authenticate(const std::string& id, const std::string& secret);
  // Every client, oldest first (the CLI's listing: there are few).
  Result<std::vector<ApiClient>> list();
  // One page of GET /api/v1/clients (contract §7 paging).
  Result<paging::Page<ApiClient>> list(const paging::PageRequest& request,
                                       const paging::TokenCodec& codec);
  static paging::Listing listing() { return paging::Listing{"api_clients", ""}; }
  Status remove(const std::string& id);

 private:
  store::Db& db_;
};

}  // namespace portcullis::management
