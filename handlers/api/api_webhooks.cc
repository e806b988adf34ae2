#include "api_webhooks.h"

#include "collection_routes.h"
#include "core/time.h"
#include "events/delivery_store.h"
#include "events/event_store.h"
#include "format/json.h"
#include "listing.h"
#include "operations/management.h"
#include "webhooks/webhook_store.h"

namespace portcullis::api_worker {
namespace {

using server::Context;
using webhooks::WebhookStore;

using operations::webhook_store;
WebhookStore store_of(Context& ctx) {
  return webhook_store(ctx);
}

std::string path_id(Context& ctx) {
  return ctx.request.path_param("webhook_id");
}

Result<http::Response> create_webhook(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::WebhookFields fields,
                              webhooks::read_fields(body, true, ctx.services.config.is_local()));
  PORTCULLIS_ASSIGN_OR_RETURN(WebhookStore::Created created,
                              operations::create_webhook(ctx, fields));
  Json::Value out = webhooks::to_json(created.webhook);
  out["secret"] = created.secret;
  http::Response r = http::Response::json(201, out);
  r.set_header("Location", ctx.services.config.base_url + "/api/v1/webhooks/" + created.webhook.id);
  return r;
}

Result<http::Response> get_webhook(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::Webhook w, store_of(ctx).get(path_id(ctx)));
  return http::Response::json(200, webhooks::to_json(w));
}

Result<http::Response> list_webhooks(Context& ctx) {
  WebhookStore store = store_of(ctx);
  return listing_response(
      ctx, WebhookStore::listing(), "webhooks",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return store.list(request, codec);
      },
      [](const webhooks::Webhook& w) { return webhooks::to_json(w); });
}

Result<http::Response> update_webhook(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::WebhookFields fields,
                              webhooks::read_fields(body, false, ctx.services.config.is_local()));
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::Webhook w, store_of(ctx).update(path_id(ctx), fields));
  Json::Value data(Json::objectValue);
  data["webhook_id"] = w.id;
  data["fields"] = Json::Value(Json::arrayValue);
  for (const auto& key : body.getMemberNames()) data["fields"].append(key);
  ctx.record(events::type::kWebhookUpdated, {}, data);
  return http::Response::json(200, webhooks::to_json(w));
}

Result<http::Response> delete_webhook(Context& ctx) {
  PORTCULLIS_RETURN_IF_ERROR(operations::delete_webhook(ctx, path_id(ctx)));
  return http::Response::empty(204);
}

Result<http::Response> rotate_secret(Context& ctx) {
  Json::Value body(Json::objectValue);
  if (!ctx.request.body.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(body, ctx.request.json_object());
  }
  int64_t overlap = ctx.services.config.webhooks.secret_overlap_seconds;
  if (body.isMember("overlap_seconds")) {
    const Json::Value& v = body["overlap_seconds"];
    if (!v.isIntegral() || v.asInt64() < 0 || v.asInt64() > 30 * 86400) {
      return Status::invalid_argument("overlap_seconds must be an integer from 0 to 2592000");
    }
    overlap = v.asInt64();
  }
  PORTCULLIS_ASSIGN_OR_RETURN(std::string secret,
                              operations::rotate_webhook_secret(ctx, path_id(ctx), overlap));
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::Webhook w, store_of(ctx).get(path_id(ctx)));
  Json::Value out = webhooks::to_json(w);
  out["secret"] = secret;
  return http::Response::json(200, out);
}

Result<http::Response> replay(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  for (const char* field : {"delivery_id", "since"}) {
    if (body.isMember(field) && !body[field].isString()) {
      return Status::invalid_argument(std::string(field) + " must be a string");
    }
  }
  if (body.isMember("delivery_id") == body.isMember("since")) {
    return Status::invalid_argument("give either delivery_id or since (RFC 3339)");
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      int64_t queued,
      operations::replay_webhook(ctx, path_id(ctx), body.get("delivery_id", "").asString(),
                                 body.get("since", "").asString()));
  Json::Value out(Json::objectValue);
  out["queued"] = static_cast<Json::Int64>(queued);
  return http::Response::json(202, out);
}

Result<http::Response> list_deliveries(Context& ctx) {
  std::string id = path_id(ctx);
  PORTCULLIS_RETURN_IF_ERROR(store_of(ctx).get(id).status());
  return listing_response(
      ctx, events::deliveries_listing(id), "deliveries",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return events::list_deliveries(ctx.services.db, id, request, codec);
      },
      [](const Json::Value& v) { return v; });
}

}  // namespace

void install_webhook_routes(server::App& app) {
  add_collection_routes(
      app, "/api/v1/webhooks", "webhook_id", {"webhooks:write", "webhooks:write"},
      {create_webhook, list_webhooks, get_webhook, update_webhook, delete_webhook});
  const server::Auth write = management_scope("webhooks:write");
  app.add("POST", "/api/v1/webhooks/{webhook_id}/secret",
          server::Route{.handler = rotate_secret, .auth = write});
  app.add("POST", "/api/v1/webhooks/{webhook_id}/replay",
          server::Route{.handler = replay, .auth = write});
  app.add("GET", "/api/v1/webhooks/{webhook_id}/deliveries",
          server::Route{.handler = list_deliveries, .auth = write});
}

}  // namespace portcullis::api_worker
