#include "api_social.h"

#include "collection_routes.h"
#include "listing.h"
#include "social/connection_store.h"

namespace portcullis::api_worker {
namespace {

using server::Context;
using social::SocialConnection;

void record(Context& ctx, const events::EventType& type, const SocialConnection& c) {
  events::Event e = ctx.event(type);
  e.data["connection_id"] = c.id;
  e.data["provider"] = c.provider;
  e.data["enabled"] = c.enabled;
  e.data["by"] = ctx.caller.id;
  ctx.events.add(std::move(e));
}

social::SocialConnectionStore store_of(Context& ctx) {
  return social::SocialConnectionStore(ctx.services.db, ctx.services.master_key);
}

http::Response answer(Context& ctx, int status, const SocialConnection& c) {
  return http::Response::json(status, social::to_json(c, ctx.services.config.base_url));
}

Result<http::Response> create_social(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  SocialConnection c;
  std::optional<std::string> secret;
  PORTCULLIS_RETURN_IF_ERROR(social::apply_body(body, false, c, secret));
  PORTCULLIS_RETURN_IF_ERROR(store_of(ctx).create(c, secret.value_or("")));
  record(ctx, events::type::kSocialConnectionCreated, c);
  http::Response out = answer(ctx, 201, c);
  out.set_header("Location", ctx.services.config.base_url + "/api/v1/social_connections/" + c.id);
  return out;
}

Result<http::Response> list_social(Context& ctx) {
  social::SocialConnectionStore store = store_of(ctx);
  const std::string base = ctx.services.config.base_url;
  return listing_response(
      ctx, social::SocialConnectionStore::listing(), "social_connections",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return store.list(request, codec);
      },
      [&base](const SocialConnection& c) { return social::to_json(c, base); });
}

Result<http::Response> get_social(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(SocialConnection c,
                              store_of(ctx).get(ctx.request.path_param("connection_id")));
  return answer(ctx, 200, c);
}

Result<http::Response> update_social(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  social::SocialConnectionStore store = store_of(ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(SocialConnection c,
                              store.get(ctx.request.path_param("connection_id")));
  std::optional<std::string> secret;
  PORTCULLIS_RETURN_IF_ERROR(social::apply_body(body, true, c, secret));
  PORTCULLIS_RETURN_IF_ERROR(store.update(c, secret));
  record(ctx, events::type::kSocialConnectionUpdated, c);
  return answer(ctx, 200, c);
}

Result<http::Response> delete_social(Context& ctx) {
  social::SocialConnectionStore store = store_of(ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(SocialConnection c,
                              store.get(ctx.request.path_param("connection_id")));
  PORTCULLIS_RETURN_IF_ERROR(store.remove(c.id));
  record(ctx, events::type::kSocialConnectionDeleted, c);
  return http::Response::empty(204);
}

}  // namespace

void install_social_routes(server::App& app) {
  add_collection_routes(app, "/api/v1/social_connections", "connection_id",
                        {"resources:write", "resources:write"},
                        {create_social, list_social, get_social, update_social, delete_social});
}

}  // namespace portcullis::api_worker
