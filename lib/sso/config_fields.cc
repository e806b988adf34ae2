#include "sso/config_fields.h"

#include "outbound/url.h"

namespace portcullis::sso::fields {

Result<std::string> text(const Json::Value& v, const std::string& key, size_t max) {
  if (!v.isString()) return Status::invalid_argument(key + " must be a string");
  std::string s = v.asString();
  if (s.empty() || s.size() > max) {
    return Status::invalid_argument(key + " must be 1.." + std::to_string(max) + " characters");
  }
  return s;
}

Result<std::string> https_url(const Json::Value& v, const std::string& key) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string s, text(v, key, kMaxUrl));
  if (auto parsed = outbound::parse_https_url(s); !parsed) {
    return Status::invalid_argument(key + ": " + parsed.status().message());
  }
  return s;
}

Result<std::vector<std::string>> scope_tokens(const Json::Value& v, bool allow_empty) {
  if (!v.isArray() || (v.empty() && !allow_empty) || v.size() > kMaxScopes) {
    return Status::invalid_argument(std::string("scopes must be an array of ") +
                                    (allow_empty ? "0" : "1") + "..20 strings");
  }
  std::vector<std::string> scopes;
  for (const auto& s : v) {
    if (!s.isString() || s.asString().empty() || s.asString().size() > 128 ||
        s.asString().find_first_of(" \"\\") != std::string::npos) {
      return Status::invalid_argument("scopes must be scope tokens");
    }
    scopes.push_back(s.asString());
  }
  return scopes;
}

Json::Value strings(const std::vector<std::string>& list) {
  Json::Value a(Json::arrayValue);
  for (const auto& s : list) a.append(s);
  return a;
}

std::string str(const Json::Value& v, const char* key) {
  return v.isObject() && v[key].isString() ? v[key].asString() : std::string();
}

}  // namespace portcullis::sso::fields
