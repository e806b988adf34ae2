// Home-realm discovery (contract §10): which organization's identity provider a sign-in goes
// to, from the typed e-mail address or the hints of /oauth/authorize.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "crypto/aead.h"
#include "sso/connection.h"
#include "store/db.h"

namespace portcullis::sso {

struct RealmHints {
  std::string connection_id;    // conn_…: that connection
  std::string organization_id;  // that organization's active connection
  std::string domain_hint;      // the organization holding the domain verified
  std::string email;            // the same for the address's domain (login_hint or typed)
};

// The active connection the first hint that names one leads to, in the order above; nullopt
// when none does (the e-mail code then serves). An inactive or draft connection leads nowhere.
Result<std::optional<Connection>> find_realm(store::Db& db, const crypto::MasterKey& master_key,
                                             const RealmHints& hints);

}  // namespace portcullis::sso
