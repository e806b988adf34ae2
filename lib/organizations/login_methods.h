// The sign-in methods (contract §7 `login_methods`, §10): what the environment offers
// (custom_login/login_settings.h) and what an organization allows its members on top of that
// (an organization's `login_methods`, null = whatever the environment offers).
#pragma once

#include <json/value.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace portcullis::organizations {

// email (one-time code or link), social, sso, custom.
const std::vector<std::string>& known_login_methods();

// `field`'s value: a non-empty array of distinct known methods, in the caller's order.
// InvalidArgument naming `field` otherwise.
Result<std::vector<std::string>> parse_login_methods(const Json::Value& v, std::string_view field);

bool has_method(const std::vector<std::string>& methods, std::string_view method);

}  // namespace portcullis::organizations
