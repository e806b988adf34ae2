#include "db_login_flow.h"

#include "clients/redirect_uri.h"
#include "core/time.h"
#include "crypto/random.h"
#include "format/json.h"
#include "http/request.h"
#include "oauth/login_requests.h"

namespace portcullis::testing {
namespace {

std::string member(const Json::Value& v, const char* key) {
  const Json::Value* m = json::find_member(v, key);
  return m && m->isString() ? m->asString() : std::string();
}

}  // namespace

// The real store reads and updates the rows; only what the consent page shows is the double's.
Result<oauth::LoginRequest> DbLoginFlowDouble::get(const std::string& id, int64_t now) {
  return oauth::LoginRequestStore(db_).get(id, now);
}

Status DbLoginFlowDouble::attach_user(const std::string& id, const std::string& user_id,
                                      int64_t auth_time,
                                      const std::string& signin_organization_id) {
  return oauth::LoginRequestStore(db_).attach_user(id, user_id, auth_time, signin_organization_id);
}

Result<pages::ConsentScreen> DbLoginFlowDouble::describe_consent(const oauth::LoginRequest& r) {
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                              db_.query("SELECT params FROM login_requests WHERE id = ?", {r.id}));
  if (rows.empty()) return Status::not_found("no such login request");
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value params, json::parse(rows[0].str(0)));
  pages::ConsentScreen s;
  s.client_name = member(params, "test_client_name");
  s.client_host = member(params, "test_client_host");
  s.resource_name = member(params, "test_resource_name");
  s.redirect_host = oauth::uri_host(r.redirect_uri);
  s.redirect_is_localhost = oauth::is_loopback_redirect(r.redirect_uri);
  if (const Json::Value* scopes = json::find_member(params, "test_scopes")) {
    for (const Json::Value& scope : *scopes) {
      s.scopes.push_back({member(scope, "name"), member(scope, "description")});
    }
  }
  return s;
}

Result<http::Response> DbLoginFlowDouble::continue_after_sign_in(server::Context&,
                                                                 const oauth::LoginRequest& r) {
  return http::Response::see_other("/oauth/consent?login_request_id=" + http::url_encode(r.id));
}

Result<http::Response> DbLoginFlowDouble::finish_with_consent(server::Context&,
                                                              const oauth::LoginRequest& r,
                                                              bool allow) {
  ++finished;
  last_allow = allow;
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("UPDATE login_requests SET completed_at = ? WHERE id = ?", {unix_now(), r.id})
          .status());
  std::string location =
      r.redirect_uri + (r.redirect_uri.find('?') == std::string::npos ? "?" : "&");
  location +=
      allow ? "code=double-" + crypto::random_token(16) : std::string("error=access_denied");
  location += "&state=" + http::url_encode(r.state);
  return http::Response::see_other(location);
}

Result<std::pair<std::string, std::string>> insert_login_request(store::Db& db,
                                                                 const LoginRequestSeed& seed) {
  Json::Value params(Json::objectValue);
  params["redirect_uri"] = seed.redirect_uri;
  params["scope"] = "";
  params["state"] = seed.state;
  params["login_hint"] = seed.login_hint;
  params["test_client_name"] = seed.client_name;
  params["test_client_host"] = seed.client_host;
  params["test_resource_name"] = seed.resource_name;
  params["test_scopes"] = Json::Value(Json::arrayValue);
  for (const auto& [name, description] : seed.scopes) {
    Json::Value s(Json::objectValue);
    s["name"] = name;
    s["description"] = description;
    params["test_scopes"].append(s);
  }
  std::string id = crypto::random_token(24);
  std::string csrf = crypto::random_token(24);
  int64_t expires = seed.expires_at ? seed.expires_at : unix_now() + 600;
  PORTCULLIS_RETURN_IF_ERROR(
      db.execute(
            "INSERT INTO login_requests (id, client_id, resource_id, params, csrf_token, "
            "create_time, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            {id, seed.client_id, seed.resource_id, json::write(params), csrf, db_now(), expires})
          .status());
  return std::make_pair(id, csrf);
}

}  // namespace portcullis::testing
