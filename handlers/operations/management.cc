#include "operations/management.h"

#include "core/rfc3339.h"
#include "management/scopes.h"

namespace portcullis::operations {

Result<management::NewApiClient> create_api_client(server::Context& ctx, const std::string& name,
                                                   const std::vector<std::string>& requested) {
  if (name.empty() || name.size() > 200) {
    return Status::invalid_argument("name must be a string of 1 to 200 characters");
  }
  if (requested.empty()) {
    return Status::invalid_argument("scopes must be a non-empty array of management scopes");
  }
  PORTCULLIS_ASSIGN_OR_RETURN(std::set<std::string> scopes,
                              management::parse_scope_list(requested));
  for (const auto& s : scopes) {
    if (!ctx.caller.has_scope(s)) {
      return Status::permission_denied("cannot grant the scope " + s + " without holding it");
    }
  }
  PORTCULLIS_ASSIGN_OR_RETURN(management::NewApiClient created,
                              management::ApiClientStore(ctx.services.db).create(name, scopes));
  events::Event e = ctx.event(events::type::kApiClientCreated);
  e.client_id = created.client.id;
  e.data["created_by"] = ctx.caller.id;
  ctx.events.add(std::move(e));
  return created;
}

Status delete_api_client(server::Context& ctx, const std::string& client_id) {
  management::ApiClientStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(management::ApiClient c, store.get(client_id));
  for (const auto& s : c.scopes) {
    if (!ctx.caller.has_scope(s)) {
      return Status::permission_denied("deleting this client needs the scope " + s);
    }
  }
  PORTCULLIS_RETURN_IF_ERROR(store.remove(c.id));
  events::Event e = ctx.event(events::type::kApiClientDeleted);
  e.client_id = c.id;
  e.data["deleted_by"] = ctx.caller.id;
  ctx.events.add(std::move(e));
  return Status::ok();
}

webhooks::WebhookStore webhook_store(server::Context& ctx) {
  return webhooks::WebhookStore(ctx.services.db, ctx.services.master_key);
}

Result<webhooks::WebhookStore::Created> create_webhook(server::Context& ctx,
                                                       const webhooks::WebhookFields& fields) {
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::WebhookStore::Created created,
                              webhook_store(ctx).create(fields));
  Json::Value data(Json::objectValue);
  data["webhook_id"] = created.webhook.id;
  data["url"] = created.webhook.url;
  data["event_types"] = webhooks::to_json(created.webhook)["event_types"];
  ctx.record(events::type::kWebhookCreated, {}, data);
  return created;
}

Status delete_webhook(server::Context& ctx, const std::string& webhook_id) {
  webhooks::WebhookStore store = webhook_store(ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::Webhook w, store.get(webhook_id));
  PORTCULLIS_RETURN_IF_ERROR(store.remove(w.id));
  Json::Value data(Json::objectValue);
  data["webhook_id"] = w.id;
  data["url"] = w.url;
  ctx.record(events::type::kWebhookDeleted, {}, data);
  return Status::ok();
}

Result<std::string> rotate_webhook_secret(server::Context& ctx, const std::string& webhook_id,
                                          int64_t overlap_seconds) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string secret,
                              webhook_store(ctx).rotate_secret(webhook_id, overlap_seconds));
  Json::Value data(Json::objectValue);
  data["webhook_id"] = webhook_id;
  data["overlap_seconds"] = static_cast<Json::Int64>(overlap_seconds);
  ctx.record(events::type::kWebhookSecretRotated, {}, data);
  return secret;
}

Result<int64_t> replay_webhook(server::Context& ctx, const std::string& webhook_id,
                               const std::string& delivery_id, const std::string& since) {
  if (delivery_id.empty() == since.empty()) {
    return Status::invalid_argument("give either delivery_id or since (RFC 3339)");
  }
  webhooks::WebhookStore store = webhook_store(ctx);
  Json::Value data(Json::objectValue);
  data["webhook_id"] = webhook_id;
  int64_t queued = 0;
  if (!delivery_id.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(queued, store.replay_delivery(webhook_id, delivery_id));
    data["delivery_id"] = delivery_id;
  } else {
    auto time = rfc3339_to_db_time(since);
    if (!time) return Status::invalid_argument("since: " + time.status().message());
    PORTCULLIS_ASSIGN_OR_RETURN(queued, store.replay_since(webhook_id, *time));
    data["since"] = since;
  }
  data["queued"] = static_cast<Json::Int64>(queued);
  ctx.record(events::type::kWebhookReplayed, {}, data);
  return queued;
}

}  // namespace portcullis::operations
