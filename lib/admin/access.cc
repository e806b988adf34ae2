#include "admin/access.h"

#include <algorithm>

#include "organizations/membership_store.h"

namespace portcullis::admin {

bool Access::sees_organization(const std::string& organization_id) const {
  if (environment_admin) return true;
  return std::find(organization_ids.begin(), organization_ids.end(), organization_id) !=
         organization_ids.end();
}

Result<Access> access_of(store::Db& db, const std::string& user_id) {
  Access access;
  PORTCULLIS_ASSIGN_OR_RETURN(access.user, identity::UserStore(db).get(user_id));
  access.environment_admin = access.user.is_environment_admin();
  PORTCULLIS_ASSIGN_OR_RETURN(auto memberships,
                              organizations::MembershipStore(db).of_users({user_id}));
  for (const auto& m : memberships[user_id]) {
    if (m.status != "active") continue;
    if (std::find(m.roles.begin(), m.roles.end(), kOrganizationAdminRole) != m.roles.end()) {
      access.organization_ids.push_back(m.organization_id);
    }
  }
  return access;
}

}  // namespace portcullis::admin
