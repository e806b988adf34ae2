#include "operations/users.h"

#include "admin/session_store.h"
#include "core/time.h"
#include "identity/session_store.h"
#include "tokens/grants.h"

namespace portcullis::operations {

Result<identity::User> update_user(server::Context& ctx, const std::string& id,
                                   const identity::UserFields& fields,
                                   const std::vector<std::string>& changed) {
  identity::UserStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(identity::User before, store.get(id));
  PORTCULLIS_ASSIGN_OR_RETURN(identity::User u, store.update(before.id, fields));
  Json::Value data(Json::objectValue);
  data["fields"] = Json::Value(Json::arrayValue);
  for (const auto& key : changed) data["fields"].append(key);
  ctx.record(events::type::kUserUpdated, {.user_id = u.id}, data);
  if (before.active && !u.active) ctx.record(events::type::kUserDeactivated, {.user_id = u.id});
  return u;
}

Status revoke_user_sessions(server::Context& ctx, const std::string& user_id) {
  store::Db& db = ctx.services.db;
  PORTCULLIS_ASSIGN_OR_RETURN(identity::User u, identity::UserStore(db).get(user_id));
  const int64_t now = unix_now();
  PORTCULLIS_RETURN_IF_ERROR(db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(identity::SessionStore::revoke_all_for_user(db, u.id, now));
    PORTCULLIS_RETURN_IF_ERROR(
        admin::SessionStore(db, ctx.services.config).end_all_for_user(u.id, now));
    return oauth::GrantStore(db).revoke_all_for_user(u.id, "admin_revoked", now);
  }));
  Json::Value data(Json::objectValue);
  data["browser_sessions"] = true;
  data["grants"] = true;
  ctx.record(events::type::kUserSessionsRevoked, {.user_id = u.id}, data);
  return Status::ok();
}

Status revoke_user_grant(server::Context& ctx, const std::string& user_id,
                         const std::string& grant_id) {
  oauth::GrantStore grants(ctx.services.db);
  auto grant = grants.get(grant_id);
  if (!grant) {
    if (grant.status().code() == Code::kNotFound) return Status::not_found("no such grant");
    return grant.status();
  }
  if (grant->user_id != user_id) return Status::not_found("no such grant");
  PORTCULLIS_RETURN_IF_ERROR(grants.revoke(grant->id, "admin_revoked", unix_now()));
  Json::Value data(Json::objectValue);
  data["grant_id"] = grant->id;
  data["token_type"] = "refresh_token";
  data["reason"] = "admin_revoked";
  ctx.record(
      events::type::kTokenRevoked,
      {.user_id = grant->user_id, .resource_id = grant->resource_id, .client_id = grant->client_id},
      data);
  return Status::ok();
}

}  // namespace portcullis::operations
