#include "oauth/login_requests.h"

#include "core/time.h"
#include "crypto/random.h"
#include "format/json.h"
#include "format/json_strings.h"

namespace portcullis::oauth {
namespace {

Json::Value to_params(const LoginRequest& r) {
  Json::Value p(Json::objectValue);
  p["redirect_uri"] = r.redirect_uri;
  p["scopes"] = Json::Value(Json::arrayValue);
  for (const auto& s : r.scopes) p["scopes"].append(s);
  p["state"] = r.state;
  p["code_challenge"] = r.code_challenge;
  p["nonce"] = r.nonce;
  p["prompt"] = r.prompt;
  p["login_hint"] = r.login_hint;
  if (!r.domain_hint.empty()) p["domain_hint"] = r.domain_hint;
  if (!r.organization_id.empty()) p["organization_id"] = r.organization_id;
  if (!r.connection_id.empty()) p["connection_id"] = r.connection_id;
  if (!r.dpop_jkt.empty()) p["dpop_jkt"] = r.dpop_jkt;
  return p;
}

std::string text(const Json::Value& v, const char* key) {
  const Json::Value* m = json::find_member(v, key);
  return m && m->isString() ? m->asString() : std::string();
}

}  // namespace

Status LoginRequestStore::create(LoginRequest& r, int64_t now) {
  r.id = crypto::random_token(24);
  r.csrf_token = crypto::random_token(24);
  r.expires_at = now + kLoginRequestLifetimeSeconds;
  return db_
      .execute(
          "INSERT INTO login_requests (id, client_id, resource_id, params, user_id, "
          "auth_time, csrf_token, create_time, expires_at, signin_organization_id) VALUES (?, ?, "
          "?, ?, ?, ?, ?, ?, ?, ?)",
          {r.id, r.client_id, r.resource_id, json::write(to_params(r)),
           r.user_id.empty() ? store::Value(nullptr) : store::Value(r.user_id),
           r.user_id.empty() ? store::Value(nullptr) : store::Value(r.auth_time), r.csrf_token,
           db_now(), r.expires_at,
           r.signin_organization_id.empty() ? store::Value(nullptr)
                                            : store::Value(r.signin_organization_id)})
      .status();
}

Result<LoginRequest> LoginRequestStore::get(const std::string& id, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT id, client_id, resource_id, params, user_id, auth_time, csrf_token, "
                "expires_at, signin_organization_id FROM login_requests WHERE id = ? AND "
                "completed_at IS NULL AND expires_at > ?",
                {id, now}));
  if (rows.empty()) return Status::not_found("this sign-in request has expired or was completed");
  const store::Row& row = rows[0];
  auto params = json::parse(row.str(3));
  if (!params) return Status::internal("stored login request is not JSON");
  LoginRequest r;
  r.id = row.str(0);
  r.client_id = row.str(1);
  r.resource_id = row.str(2);
  r.redirect_uri = text(*params, "redirect_uri");
  if (const Json::Value* scopes = json::find_member(*params, "scopes")) {
    r.scopes = json::string_elements(*scopes);
  }
  r.state = text(*params, "state");
  r.code_challenge = text(*params, "code_challenge");
  r.nonce = text(*params, "nonce");
  r.prompt = text(*params, "prompt");
  r.login_hint = text(*params, "login_hint");
  r.domain_hint = text(*params, "domain_hint");
  r.organization_id = text(*params, "organization_id");
  r.connection_id = text(*params, "connection_id");
  r.dpop_jkt = text(*params, "dpop_jkt");
  r.user_id = row.str(4);
  r.auth_time = row.i64(5);
  r.csrf_token = row.str(6);
  r.expires_at = row.i64(7);
  r.signin_organization_id = row.opt(8).value_or("");
  return r;
}

Status LoginRequestStore::attach_user(const std::string& id, const std::string& user_id,
                                      int64_t auth_time,
                                      const std::string& signin_organization_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t n,
      db_.execute("UPDATE login_requests SET user_id = ?, auth_time = ?, "
                  "signin_organization_id = ? WHERE id = ? AND completed_at IS NULL",
                  {user_id, auth_time,
                   signin_organization_id.empty() ? store::Value(nullptr)
                                                  : store::Value(signin_organization_id),
                   id}));
  if (n == 0) return Status::not_found("this sign-in request has expired or was completed");
  return Status::ok();
}

Status LoginRequestStore::complete(const std::string& id, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t n, db_.execute("UPDATE login_requests SET completed_at = ? WHERE id = ? AND "
                              "completed_at IS NULL",
                              {now, id}));
  if (n == 0) return Status::failed_precondition("this sign-in request was already completed");
  return Status::ok();
}

Status LoginRequestStore::prune(int64_t now) {
  return db_.execute("DELETE FROM login_requests WHERE expires_at < ?", {now - 3600}).status();
}

}  // namespace portcullis::oauth
