#include "api_environment.h"

#include "core/time.h"
#include "custom_login/custom_logins.h"
#include "custom_login/login_settings.h"
#include "http/errors.h"
#include "identity/email_address.h"
#include "identity/user_store.h"
#include "organizations/organization_store.h"

namespace portcullis::api_worker {
namespace {

using server::Context;

Result<http::Response> get_environment(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::LoginSettings s,
                              custom_login::LoginSettingsStore(ctx.services.db).get());
  return http::Response::json(200, custom_login::to_json(s));
}

Result<http::Response> update_environment(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  custom_login::LoginSettingsStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::LoginSettings s, store.get());
  PORTCULLIS_RETURN_IF_ERROR(custom_login::apply_body(body, s));
  PORTCULLIS_RETURN_IF_ERROR(store.put(s));
  events::Event e = ctx.event(events::type::kEnvironmentUpdated);
  e.data = custom_login::to_json(s);
  e.data["by"] = ctx.caller.id;
  ctx.events.add(std::move(e));
  return http::Response::json(200, custom_login::to_json(s));
}

Result<std::string> optional_text(const Json::Value& user, const char* key, size_t max) {
  if (!user.isMember(key)) return std::string();
  const Json::Value& v = user[key];
  if (!v.isString() || v.asString().empty() || v.asString().size() > max) {
    return Status::invalid_argument(std::string("user.") + key + " must be a string of 1.." +
                                    std::to_string(max) + " bytes");
  }
  return v.asString();
}

// {"user":{"email","email_verified","given_name","family_name","external_id"},
//  "organization_id"}: checked, and stored as one object.
Result<Json::Value> read_completion(Context& ctx, const Json::Value& body) {
  for (const auto& key : body.getMemberNames()) {
    if (key != "user" && key != "organization_id") {
      return Status::invalid_argument("unknown field " + key);
    }
  }
  const Json::Value& user = body["user"];
  if (!user.isObject()) return Status::invalid_argument("user must be an object");
  Json::Value out(Json::objectValue);
  for (const auto& key : user.getMemberNames()) {
    if (key != "email" && key != "email_verified" && key != "given_name" && key != "family_name" &&
        key != "external_id") {
      return Status::invalid_argument("user: unknown field " + key);
    }
  }
  if (!user["email"].isString()) return Status::invalid_argument("user.email is required");
  PORTCULLIS_ASSIGN_OR_RETURN(std::string email,
                              identity::normalize_email(user["email"].asString()));
  out["email"] = email;
  if (user.isMember("email_verified") && !user["email_verified"].isBool()) {
    return Status::invalid_argument("user.email_verified must be a boolean");
  }
  out["email_verified"] = user["email_verified"].isBool() && user["email_verified"].asBool();
  for (const auto& [key, max] :
       {std::pair<const char*, size_t>{"given_name", identity::kMaxNameChars},
        {"family_name", identity::kMaxNameChars},
        {"external_id", identity::kMaxExternalIdChars}}) {
    PORTCULLIS_ASSIGN_OR_RETURN(std::string v, optional_text(user, key, max));
    if (!v.empty()) out[key] = v;
  }
  if (body.isMember("organization_id")) {
    if (!body["organization_id"].isString()) {
      return Status::invalid_argument("organization_id must be a string");
    }
    auto org =
        organizations::OrganizationStore(ctx.services.db).get(body["organization_id"].asString());
    if (!org) {
      if (org.status().code() == Code::kNotFound) {
        return Status::invalid_argument("organization_id names no organization");
      }
      return org.status();
    }
    out["organization_id"] = org->id;
  }
  return out;
}

Result<http::Response> complete_login_request(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value user, read_completion(ctx, body));
  const std::string id = ctx.request.path_param("login_request_id");
  PORTCULLIS_ASSIGN_OR_RETURN(
      custom_login::Outcome outcome,
      custom_login::CustomLoginStore(ctx.services.db).complete(id, user, unix_now()));
  using custom_login::Outcome;
  if (outcome == Outcome::kUnknown) return Status::not_found("no such login request");
  if (outcome == Outcome::kExpired) {
    return http::problem(410, Code::kFailedPrecondition, "the login request expired");
  }
  if (outcome == Outcome::kUsed) {
    return http::problem(410, Code::kFailedPrecondition, "the login request was completed already");
  }
  events::Event e = ctx.event(events::type::kLoginRequestCompleted);
  e.data["by"] = ctx.caller.id;
  if (user.isMember("organization_id")) e.organization_id = user["organization_id"].asString();
  ctx.events.add(std::move(e));
  Json::Value out(Json::objectValue);
  out["login_request_id"] = id;
  out["continue_url"] = ctx.services.config.base_url +
                        "/oauth/login/continue?login_request_id=" + http::url_encode(id);
  return http::Response::json(200, out);
}

}  // namespace

void install_environment_routes(server::App& app) {
  server::Auth write{server::AuthKind::kManagementToken, "resources:write"};
  server::Auth complete{server::AuthKind::kManagementToken, "login_requests:write"};
  app.add("GET", "/api/v1/environment", server::Route{.handler = get_environment, .auth = write});
  app.add("PATCH", "/api/v1/environment",
          server::Route{.handler = update_environment, .auth = write});
  app.add("POST", "/api/v1/login_requests/{login_request_id}/complete",
          server::Route{.handler = complete_login_request, .auth = complete});
}

}  // namespace portcullis::api_worker
