#include "custom_login/login_settings.h"

#include "core/time.h"
#include "format/json.h"
#include "format/json_strings.h"
#include "organizations/login_methods.h"
#include "outbound/url.h"

namespace portcullis::custom_login {
namespace {

constexpr size_t kMaxUrl = 2048;

// The browser is sent there, nothing is fetched: https anywhere, or http to this machine (a
// local development backend).
bool acceptable_url(const std::string& url) {
  if (outbound::parse_https_url(url)) return true;
  for (const char* local : {"http://127.0.0.1:", "http://127.0.0.1/", "http://localhost:",
                            "http://localhost/", "http://[::1]:", "http://[::1]/"}) {
    if (url.rfind(local, 0) == 0) return url.find_first_of(" \"'<>\\#") == std::string::npos;
  }
  return false;
}

}  // namespace

bool LoginSettings::allows(const std::string& method) const {
  return organizations::has_method(login_methods, method);
}

Status apply_body(const Json::Value& body, LoginSettings& s) {
  if (!body.isObject()) return Status::invalid_argument("the body must be a JSON object");
  for (const auto& key : body.getMemberNames()) {
    const Json::Value& v = body[key];
    if (key == "custom_login_url") {
      if (!v.isString() || v.asString().size() > kMaxUrl) {
        return Status::invalid_argument("custom_login_url must be a string of at most 2048 bytes");
      }
      if (!v.asString().empty() && !acceptable_url(v.asString())) {
        return Status::invalid_argument(
            "custom_login_url must be an https URL (or http on a loopback address)");
      }
      s.custom_login_url = v.asString();
    } else if (key == "login_methods") {
      PORTCULLIS_ASSIGN_OR_RETURN(s.login_methods,
                                  organizations::parse_login_methods(v, "login_methods"));
    } else {
      return Status::invalid_argument("unknown field " + key);
    }
  }
  return Status::ok();
}

Json::Value to_json(const LoginSettings& s) {
  Json::Value j(Json::objectValue);
  j["custom_login_url"] = s.custom_login_url;
  j["login_methods"] = Json::Value(Json::arrayValue);
  for (const auto& m : s.login_methods) j["login_methods"].append(m);
  return j;
}

Result<LoginSettings> LoginSettingsStore::get() {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT custom_login_url, login_methods FROM login_settings WHERE singleton = 1",
                {}));
  LoginSettings s;
  if (rows.empty()) return s;
  s.custom_login_url = rows[0].str(0);
  auto methods = json::parse(rows[0].str(1));
  if (!methods || !methods->isArray()) return Status::internal("stored login_methods not JSON");
  s.login_methods = json::string_elements(*methods);
  return s;
}

Status LoginSettingsStore::put(const LoginSettings& s) {
  const std::string methods = json::write(to_json(s)["login_methods"]);
  return db_
      .execute(
          "INSERT INTO login_settings (singleton, custom_login_url, login_methods, "
          "update_time) VALUES (1, ?, ?, ?) ON DUPLICATE KEY UPDATE custom_login_url = "
          "VALUES(custom_login_url), login_methods = VALUES(login_methods), update_time = "
          "VALUES(update_time)",
          {s.custom_login_url, methods, db_now()})
      .status();
}

}  // namespace portcullis::custom_login
