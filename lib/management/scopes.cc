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

std::set<std::string> split_scopes(std::string_view text) {
  std::set<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t sp = text.find(' ', i);
    if (sp == std::string_view::npos) sp = text.size();
    if (sp > i) out.emplace(text.substr(i, sp - i));
    i = sp + 1;
  }
  return out;
}

std::string join_scopes(const std::set<std::string>& scopes) {
  std::string out;
  for (const auto& s : scopes) {
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

Result<std::set<std::string>> parse_scope_list(const std::vector<std::string>& scopes) {
  std::set<std::string> out;
  for (const auto& s : scopes) {
    if (!is_scope(s)) return Status::invalid_argument("unknown management scope: " + s);
    out.insert(s);
  }
  return out;
}

}  // namespace portcullis::management
