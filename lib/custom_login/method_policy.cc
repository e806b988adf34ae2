#include "custom_login/method_policy.h"

#include <optional>
#include <vector>

#include "domains/domain_store.h"
#include "organizations/login_methods.h"
#include "organizations/organization_store.h"

namespace portcullis::custom_login {
namespace {

// The methods `organization_id` allows; nullopt when it restricts nothing (or does not exist:
// a sign-in naming an unknown organization is refused elsewhere, not here).
Result<std::optional<std::vector<std::string>>> allowed_by(store::Db& db,
                                                           const std::string& organization_id) {
  using Allowed = std::optional<std::vector<std::string>>;
  if (organization_id.empty()) return Allowed();
  auto org = organizations::OrganizationStore(db).get(organization_id);
  if (!org) {
    if (org.status().code() == Code::kNotFound || org.status().code() == Code::kInvalidArgument) {
      return Allowed();
    }
    return org.status();
  }
  return org->login_methods;
}

}  // namespace

Result<MethodDecision> check_method(store::Db& db, const LoginSettings& settings,
                                    const std::string& method, const std::string& email,
                                    const std::vector<std::string>& organization_ids) {
  MethodDecision decision;
  if (!settings.allows(method)) {
    decision.allowed = false;
    decision.reason = "method_disabled";
    return decision;
  }
  std::vector<std::string> concerned = organization_ids;
  if (auto at = email.rfind('@'); at != std::string::npos) {
    PORTCULLIS_ASSIGN_OR_RETURN(std::optional<std::string> owner,
                                domains::DomainStore(db).verified_owner(email.substr(at + 1)));
    if (owner) concerned.push_back(*owner);
  }
  for (const auto& org : concerned) {
    if (org.empty()) continue;
    PORTCULLIS_ASSIGN_OR_RETURN(auto allowed, allowed_by(db, org));
    if (allowed && !organizations::has_method(*allowed, method)) {
      decision.allowed = false;
      decision.reason = "method_not_allowed_by_organization";
      decision.organization_id = org;
      return decision;
    }
  }
  return decision;
}

Result<LoginSettings> narrowed_to(store::Db& db, LoginSettings settings,
                                  const std::string& organization_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(auto allowed, allowed_by(db, organization_id));
  if (!allowed) return settings;
  std::vector<std::string> both;
  for (const auto& m : settings.login_methods) {
    if (organizations::has_method(*allowed, m)) both.push_back(m);
  }
  settings.login_methods = std::move(both);
  return settings;
}

}  // namespace portcullis::custom_login
