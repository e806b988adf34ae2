// Which sign-in methods apply to one sign-in (docs/login.md "Methods per organization"): the
// environment's (login_settings.h), narrowed by every organization the sign-in concerns — the
// one it names (organization_id on /oauth/authorize, or in a custom completion) and the one
// whose verified domain holds the address. A sign-in by any other method is refused before a
// session exists, so an organization that allows only SSO cannot be bypassed with "Continue
// with Google" on one of its addresses, nor with an e-mailed code.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "custom_login/login_settings.h"
#include "store/db.h"

namespace portcullis::custom_login {

struct MethodDecision {
  bool allowed = true;
  // method_disabled (the environment does not offer it) or method_not_allowed_by_organization.
  std::string reason;
  std::string organization_id;  // the organization that refused
};

// `method` is one of organizations::known_login_methods(); `email` normalized or empty;
// `organization_ids` the organizations the sign-in names (empty strings are ignored).
Result<MethodDecision> check_method(store::Db& db, const LoginSettings& settings,
                                    const std::string& method, const std::string& email,
                                    const std::vector<std::string>& organization_ids);

// `settings` with the methods narrowed to those `organization_id` allows (unchanged when it is
// empty, unknown, or allows whatever the environment offers): what a login page that names the
// organization offers.
Result<LoginSettings> narrowed_to(store::Db& db, LoginSettings settings,
                                  const std::string& organization_id);

}  // namespace portcullis::custom_login
