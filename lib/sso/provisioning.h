// Just-in-time provisioning after an identity provider vouched for a user (issue 13 item 5):
// the environment user and the organization membership are found or created, but only for an
// e-mail address in one of the connection's organization's verified domains: an IdP can never
// assert a user of a domain its organization does not hold. A user provisioned by SCIM is
// matched by the externalId its directory gave it (equal to the asserted subject, or to the
// attribute the mapping names: Entra ID and Okta put their immutable user id there), else by
// address, never duplicated; a deactivated user, or a member SCIM deactivated in this
// organization, is refused.
#pragma once

#include <string>

#include "core/status.h"
#include "identity/user_store.h"
#include "sso/connection.h"
#include "store/db.h"

namespace portcullis::sso {

// What the identity provider said about the user, already read through the mapping.
struct AssertedUser {
  std::string email;
  std::string given_name;
  std::string family_name;
  std::string subject;  // the IdP's stable id (OIDC sub, SAML NameID)
  // The subject, or the attribute the connection's mapping names for it (external_id).
  std::string external_id;
};

// The user from OIDC claims, through the connection's mapping; email_verified false refuses.
AssertedUser user_from_claims(const Json::Value& claims, const AttributeMapping& mapping);

// The signed-in user, provisioned. On a refusal `reason` is set (email_missing,
// email_domain_not_verified, ambiguous_email, user_inactive, membership_inactive) and the
// Status is PermissionDenied.
Result<identity::User> provision(store::Db& db, const Connection& connection,
                                 const AssertedUser& asserted, std::string& reason);

}  // namespace portcullis::sso
