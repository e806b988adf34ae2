// The only writer of user_identities: the accounts that sign a user in (contract §10 account
// linking; the user object's `identities`): social and custom accounts, enterprise SSO accounts
// (realm = the connection) and the e-mail address itself for one-time codes (realm `email`).
// An account is found by its (realm, subject), never by e-mail alone; a user's rows go with the
// user (ON DELETE CASCADE).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::identity {

struct Identity {
  std::string realm;          // social/connection.h identity_realm(), conn_…, custom or email
  std::string subject;        // the provider's stable id of the account
  std::string provider;       // google, microsoft, github, oidc, oauth2 (social; saml and oidc
                              // for SSO, conn_…), custom, email
  std::string connection_id;  // soc_… or conn_… (empty for custom and e-mail)
  std::string create_time;    // RFC 3339
};

class IdentityStore {
 public:
  explicit IdentityStore(store::Db& db) : db_(db) {}

  // The user the account is linked to; nullopt when it is linked to nobody.
  Result<std::optional<std::string>> user_of(const std::string& realm, const std::string& subject);
  // Links the account to the user. AlreadyExists when it is linked to another user.
  Status link(const std::string& user_id, const Identity& identity);
  // Each user's identities, oldest first (users without any are absent).
  Result<std::map<std::string, std::vector<Identity>>> of_users(
      const std::vector<std::string>& user_ids);

 private:
  store::Db& db_;
};

}  // namespace portcullis::identity
