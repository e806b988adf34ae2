#include "sso/realm.h"

#include "domains/domain_name.h"
#include "domains/domain_store.h"
#include "identity/email_address.h"
#include "sso/connection_store.h"

namespace portcullis::sso {
namespace {

Result<std::optional<Connection>> of_domain(ConnectionStore& store, store::Db& db,
                                            const std::string& text) {
  auto domain = domains::normalize_domain(text);
  if (!domain) return std::optional<Connection>();
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<std::string> owner,
                              domains::DomainStore(db).verified_owner(*domain));
  if (!owner) return std::optional<Connection>();
  return store.active_of_organization(*owner);
}

}  // namespace

Result<std::optional<Connection>> find_realm(store::Db& db, const crypto::MasterKey& master_key,
                                             const RealmHints& hints) {
  ConnectionStore store(db, master_key);
  if (hints.connection_id.rfind("conn_", 0) == 0) {
    auto c = store.find(hints.connection_id);
    if (c && c->state == "active") return std::optional<Connection>(std::move(c).value());
    if (!c && c.status().code() != Code::kNotFound) return c.status();
  }
  if (!hints.organization_id.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(auto c, store.active_of_organization(hints.organization_id));
    if (c) return c;
  }
  if (!hints.domain_hint.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(auto c, of_domain(store, db, hints.domain_hint));
    if (c) return c;
  }
  if (auto email = identity::normalize_email(hints.email); email && !hints.email.empty()) {
    return of_domain(store, db, email->substr(email->rfind('@') + 1));
  }
  return std::optional<Connection>();
}

}  // namespace portcullis::sso
