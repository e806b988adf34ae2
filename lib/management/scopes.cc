#include "management/scopes.h"

#include <algorithm>

namespace portcullis::management {

const std::vector<std::string>& all_scopes() {
  static const std::vector<std::string> scopes = {
      "resources:read", "resources:write",   "organizations:read",  "organizations:write",
      "users:read",     "users:write",       "directories:write",   "events:read",
      "webhooks:write", "tokens:introspect", "login_requests:write"};
  return scopes;
}

bool is_scope(std::string_view scope) {
  const auto& all = all_scopes();
  return std::find(all.begin(), all.end(), scope) != all.end();
}

Result<std::set<std::string>> parse_scope_list(const std::vector<std::string>& scopes) {
  std::set<std::string> out;
  for (const auto& s : scopes) {
    if (!is_scope(s)) return Status::invalid_argument("unknown management scope: " + s);
    out.insert(s);
  }
  return out;
}

std::string management_audience(const config::Config& config) {
  return config.base_url + "/api";
}

}  // namespace portcullis::management
