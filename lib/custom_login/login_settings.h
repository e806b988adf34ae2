// The environment's sign-in settings (contract §7 `GET/PATCH /environment`, table
// login_settings, whose only writer this is): the customer's login URL for custom
// authentication (empty = off) and which methods the login page offers.
#pragma once

#include <json/value.h>

#include <string>
#include <vector>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::custom_login {

struct LoginSettings {
  std::string custom_login_url;
  std::vector<std::string> login_methods{"email", "social", "sso", "custom"};

  bool allows(const std::string& method) const;
  // Custom authentication is on: a URL, and the method allowed.
  bool custom_enabled() const { return !custom_login_url.empty() && allows("custom"); }
};

// A PATCH body applied to `s`: InvalidArgument for an unknown field, a URL that is neither
// https nor http on a loopback address, or methods that are not a non-empty set of email,
// social, sso, custom.
Status apply_body(const Json::Value& body, LoginSettings& s);
Json::Value to_json(const LoginSettings& s);

class LoginSettingsStore {
 public:
  explicit LoginSettingsStore(store::Db& db) : db_(db) {}
  // The defaults (every method, no custom URL) until a PATCH stored some.
  Result<LoginSettings> get();
  Status put(const LoginSettings& s);

 private:
  store::Db& db_;
};

}  // namespace portcullis::custom_login
