#include "oauth/signin_organization.h"

#include "domains/domain_name.h"
#include "domains/domain_store.h"
#include "organizations/membership_store.h"

namespace portcullis::oauth {

Result<std::string> named_organization(store::Db& db, const LoginRequest& request) {
  if (!request.organization_id.empty()) return request.organization_id;
  if (request.domain_hint.empty()) return std::string();
  auto domain = domains::normalize_domain(request.domain_hint);
  if (!domain) return std::string();  // a hint that names no domain names no organization
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<std::string> owner,
                              domains::DomainStore(db).verified_owner(*domain));
  return owner.value_or("");
}

std::string signin_organization(const std::string& vouched, const std::string& named,
                                const std::string& named_status) {
  // The organization that proved the user wins over the one the request named: a connection
  // hint or the address's domain may have sent the browser to another organization's provider.
  if (!vouched.empty()) return vouched;
  // Only an active membership counts: a deactivated or pending one does not.
  return named_status == "active" ? named : std::string();
}

Result<std::string> signin_organization(store::Db& db, const LoginRequest& request,
                                        const std::string& user_id, const std::string& vouched) {
  if (!vouched.empty()) return vouched;
  PORTCULLIS_ASSIGN_OR_RETURN(std::string named, named_organization(db, request));
  if (named.empty()) return std::string();
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<std::string> status,
                              organizations::MembershipStore(db).status_of(named, user_id));
  return signin_organization(vouched, named, status.value_or(""));
}

bool session_serves(const std::string& session_organization, const std::string& named) {
  return named.empty() || named == session_organization;
}

}  // namespace portcullis::oauth
