// Who may use the admin portal, and what they see (docs/admin.md):
//  - environment administrators (a user with the environment role `admin`) see everything;
//  - organization administrators (an active membership with the role `admin`) see only their
//    organizations — their domains, SSO connections, SCIM directories and members. Another
//    organization's pages answer 404, as if it did not exist;
//  - anyone else who signs in gets a 403 page.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "identity/user_store.h"
#include "store/db.h"

namespace portcullis::admin {

// The membership role that makes an organization administrator.
inline constexpr std::string_view kOrganizationAdminRole = "admin";

struct Access {
  identity::User user;
  bool environment_admin = false;
  std::vector<std::string> organization_ids;  // organizations the user administers

  bool allowed() const { return environment_admin || !organization_ids.empty(); }
  bool sees_organization(const std::string& organization_id) const;
};

// The access of the user `user_id`; NotFound when there is no such user.
Result<Access> access_of(store::Db& db, const std::string& user_id);

}  // namespace portcullis::admin
