#include "organizations/login_methods.h"

#include <algorithm>

namespace portcullis::organizations {

const std::vector<std::string>& known_login_methods() {
  static const std::vector<std::string> kMethods = {"email", "social", "sso", "custom"};
  return kMethods;
}

bool has_method(const std::vector<std::string>& methods, std::string_view method) {
  return std::find(methods.begin(), methods.end(), method) != methods.end();
}

Result<std::vector<std::string>> parse_login_methods(const Json::Value& v, std::string_view field) {
  const std::string name(field);
  if (!v.isArray() || v.empty()) {
    return Status::invalid_argument(name + " must be a non-empty array");
  }
  std::vector<std::string> methods;
  for (const auto& m : v) {
    if (!m.isString() || !has_method(known_login_methods(), m.asString())) {
      return Status::invalid_argument(name + " holds email, social, sso or custom");
    }
    if (has_method(methods, m.asString())) {
      return Status::invalid_argument(name + " repeats " + m.asString());
    }
    methods.push_back(m.asString());
  }
  return methods;
}

}  // namespace portcullis::organizations
