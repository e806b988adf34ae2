#include "social/linking.h"

#include "identity/email_address.h"

namespace portcullis::social {
namespace {

Status refuse(std::string& reason, std::string why, const std::string& message) {
  reason = std::move(why);
  return Status::permission_denied(message);
}

}  // namespace

Result<identity::User> link_account(store::Db& db, const AccountClaim& claim, std::string& reason) {
  if (claim.identity.subject.empty() || claim.identity.subject.size() > 255) {
    return refuse(reason, "subject_missing", "the provider sent no usable account id");
  }
  identity::UserStore users(db);
  identity::IdentityStore identities(db);
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<std::string> linked,
                              identities.user_of(claim.identity.realm, claim.identity.subject));
  std::optional<identity::User> user;
  if (linked) {
    auto found = users.get(*linked);
    if (!found) return found.status();
    if (found->email.empty()) return refuse(reason, "email_missing", "the user has no address");
    user = std::move(found).value();
  } else {
    auto email = identity::normalize_email(claim.email);
    if (claim.email.empty() || !email) {
      return refuse(reason, "email_missing", "the provider sent no usable e-mail address");
    }
    if (!claim.email_verified) {
      return refuse(reason, "email_not_verified",
                    "the provider does not vouch for the e-mail address");
    }
    auto owner = users.find_or_create_by_verified_email(*email);
    if (!owner) {
      if (owner.status().code() == Code::kFailedPrecondition) {
        return refuse(reason, "ambiguous_email", "a very similar address exists");
      }
      return owner.status();
    }
    PORTCULLIS_RETURN_IF_ERROR(identities.link(owner->id, claim.identity));
    user = std::move(owner).value();
  }
  if (!user->active) return refuse(reason, "user_inactive", "the user is deactivated");
  // Names the provider knows fill what the user record lacks (never overwrite).
  identity::UserFields names;
  if (!user->given_name && !claim.given_name.empty() &&
      claim.given_name.size() <= identity::kMaxNameChars) {
    names.given_name = std::optional<std::string>(claim.given_name);
  }
  if (!user->family_name && !claim.family_name.empty() &&
      claim.family_name.size() <= identity::kMaxNameChars) {
    names.family_name = std::optional<std::string>(claim.family_name);
  }
  if (names.given_name || names.family_name) return users.update(user->id, names);
  return std::move(*user);
}

}  // namespace portcullis::social
