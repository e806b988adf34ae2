#include "sso/provisioning.h"

#include "domains/domain_store.h"
#include "format/json.h"
#include "identity/email_address.h"
#include "identity/identity_store.h"
#include "organizations/membership_store.h"
#include "scim/scim_store.h"

namespace portcullis::sso {
namespace {

std::string claim(const Json::Value& claims, const std::string& name) {
  const Json::Value* v = json::find_member(claims, name);
  return v && v->isString() ? v->asString() : std::string();
}

Status refuse(std::string& reason, std::string why, const std::string& message) {
  reason = std::move(why);
  return Status::permission_denied(message);
}

}  // namespace

AssertedUser user_from_claims(const Json::Value& claims, const AttributeMapping& mapping) {
  AssertedUser u;
  u.email = claim(claims, mapping.email);
  const Json::Value* verified = json::find_member(claims, "email_verified");
  // An address the provider itself says is unverified proves nothing.
  if (verified && verified->isBool() && !verified->asBool()) u.email.clear();
  u.given_name = claim(claims, mapping.given_name);
  u.family_name = claim(claims, mapping.family_name);
  u.subject = claim(claims, "sub");
  u.external_id = mapping.external_id.empty() ? u.subject : claim(claims, mapping.external_id);
  return u;
}

namespace {

// The environment user the assertion names: the organization's SCIM user whose externalId is
// the asserted external id, else the user of the address (found or created).
Result<identity::User> asserted_user(store::Db& db, const Connection& connection,
                                     const AssertedUser& asserted, std::string& reason) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::optional<scim::ExternalIdMatch> match,
      scim::find_by_external_id(db, connection.organization_id, asserted.external_id));
  if (match) {
    if (!match->active) {
      return refuse(reason, "membership_inactive",
                    "the organization's directory deactivated the user");
    }
    return identity::UserStore(db).get(match->user_id);
  }
  auto email = identity::normalize_email(asserted.email);
  if (asserted.email.empty() || !email) {
    return refuse(reason, "email_missing", "the identity provider sent no usable e-mail address");
  }
  const std::string domain = email->substr(email->rfind('@') + 1);
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<std::string> owner,
                              domains::DomainStore(db).verified_owner(domain));
  if (!owner || *owner != connection.organization_id) {
    return refuse(reason, "email_domain_not_verified",
                  "the address is not in a verified domain of the organization");
  }
  identity::UserStore users(db);
  auto user = users.find_or_create_by_verified_email(*email);
  if (!user) {
    if (user.status().code() == Code::kFailedPrecondition) {
      return refuse(reason, "ambiguous_email", "a very similar address exists");
    }
    return user.status();
  }
  return user;
}

}  // namespace

Result<identity::User> provision(store::Db& db, const Connection& connection,
                                 const AssertedUser& asserted, std::string& reason) {
  identity::UserStore users(db);
  PORTCULLIS_ASSIGN_OR_RETURN(identity::User user, asserted_user(db, connection, asserted, reason));
  if (!user.active) return refuse(reason, "user_inactive", "the user is deactivated");

  organizations::MembershipStore memberships(db);
  PORTCULLIS_ASSIGN_OR_RETURN(auto of_user, memberships.of_users({user.id}));
  bool member = false;
  for (const auto& m : of_user[user.id]) {
    if (m.organization_id != connection.organization_id) continue;
    if (m.status == "inactive") {
      return refuse(reason, "membership_inactive", "the membership is deactivated");
    }
    member = true;
  }
  if (!member) {
    PORTCULLIS_RETURN_IF_ERROR(
        memberships
            .put(connection.organization_id, user.id, organizations::MembershipFields{}, "sso")
            .status());
  }
  // The IdP's account joins the user's identities (contract §10 account linking). An account
  // linked to another user earlier (its address changed at the IdP) stays with that user: the
  // sign-in is by the verified address, which this organization's domain vouches for.
  if (!asserted.subject.empty() && asserted.subject.size() <= 255) {
    Status linked = identity::IdentityStore(db).link(
        user.id,
        identity::Identity{connection.id, asserted.subject, connection.type, connection.id, ""});
    if (!linked.is_ok() && linked.code() != Code::kAlreadyExists) return linked;
  }
  // Names the IdP knows fill what the user record lacks (never overwrite SCIM's or the API's).
  identity::UserFields names;
  if (!user.given_name && !asserted.given_name.empty())
    names.given_name = std::optional<std::string>(asserted.given_name);
  if (!user.family_name && !asserted.family_name.empty()) {
    names.family_name = std::optional<std::string>(asserted.family_name);
  }
  if (names.given_name || names.family_name) {
    PORTCULLIS_ASSIGN_OR_RETURN(identity::User updated, users.update(user.id, names));
    return updated;
  }
  return user;
}

}  // namespace portcullis::sso
