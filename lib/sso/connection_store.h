// The only writer of sso_connections. The OIDC client secret and the SAML SP private keys are
// sealed with the master key (crypto/aead.h), bound to the connection's id, and opened only to
// call the IdP or to build the SAML SP.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "crypto/aead.h"
#include "paging/keyset.h"
#include "sso/connection.h"
#include "sso/saml_sp.h"
#include "store/db.h"

namespace portcullis::sso {

class ConnectionStore {
 public:
  ConnectionStore(store::Db& db, const crypto::MasterKey& master_key)
      : db_(db), master_key_(master_key) {}

  // Assigns id and times and stores `c` with its secret (sealed).
  Status create(Connection& c, const std::optional<std::string>& client_secret);
  // NotFound unless `id` is a connection of that organization.
  Result<Connection> get(const std::string& organization_id, const std::string& id);
  // Any organization's connection by id (the sign-in side); NotFound when unknown.
  Result<Connection> find(const std::string& id);
  Result<paging::Page<Connection>> list(const std::string& organization_id,
                                        const paging::PageRequest& request,
                                        const paging::TokenCodec& codec);
  static paging::Listing listing(const std::string& organization_id);
  // Stores every field of `c`; the secret only when one is given.
  Status update(Connection& c, const std::optional<std::string>& client_secret);
  Status remove(const std::string& organization_id, const std::string& id);

  // The organization's active connection (the oldest, when several are active).
  Result<std::optional<Connection>> active_of_organization(const std::string& organization_id);
  // A SAML connection stored before SP keys existed gets its pair now (sp_keys.h); `c` then
  // carries the stored certificates. Nothing for OIDC or a connection that has them.
  Status ensure_sp_keys(Connection& c, int64_t now);
  // The SP private keys of a SAML connection, opened (to build the worker's Lasso server).
  Result<SpKeys> sp_keys(const Connection& c);
  // The SP of SAML connection `c` under `base_url` (sp_of) with its certificates, after
  // ensure_sp_keys; its private keys are opened only when a worker builds its Lasso server.
  // The SamlSp must not outlive the store's database and master key.
  Result<SamlSp> saml_sp(Connection& c, const std::string& base_url, int64_t now);

  // What the active connections are, newest change first, at most `limit` (a worker keeping
  // their state ready, warm.h): one index range read.
  struct Version {
    std::string id;
    std::string type;
    std::string update_time;  // moves with every change of the connection
  };
  Result<std::vector<Version>> active_versions(size_t limit);

  // The OIDC client secret in the clear, to authenticate to the IdP's token endpoint.
  Result<std::string> client_secret(const Connection& c);

 private:
  store::Db& db_;
  const crypto::MasterKey& master_key_;
};

}  // namespace portcullis::sso
