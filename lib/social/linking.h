// Account linking (contract §10, issue 14): one environment user per verified e-mail address,
// whichever method signed it in. An account already linked (by its realm and subject) signs in
// as its user. An account not linked yet links to the user owning its address — created when
// there is none — but only when the provider vouches for the address: an unverified address
// never links to an existing user, and never creates one (it could be anyone's).
#pragma once

#include <string>

#include "core/status.h"
#include "identity/identity_store.h"
#include "identity/user_store.h"
#include "store/db.h"

namespace portcullis::social {

struct AccountClaim {
  identity::Identity identity;  // realm, subject, provider, connection_id
  std::string email;
  bool email_verified = false;
  std::string given_name;
  std::string family_name;
};

// The user the account signs in as, linked. On a refusal `reason` is set (subject_missing,
// email_missing, email_not_verified, ambiguous_email, user_inactive) and the Status is
// PermissionDenied.
Result<identity::User> link_account(store::Db& db, const AccountClaim& claim, std::string& reason);

}  // namespace portcullis::social
