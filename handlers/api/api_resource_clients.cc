#include "api_resource_clients.h"

#include "clients/clients.h"
#include "clients/resources.h"
#include "collection_routes.h"
#include "listing.h"
#include "operations/resources.h"
#include "paging/keyset.h"

namespace portcullis::api_worker {
namespace {

using server::Context;

Json::Value to_json(const oauth::RegisteredClient& c) {
  Json::Value v = oauth::registration_response(c);
  v["create_time"] = c.create_time;
  if (!c.last_used_time.empty()) v["last_used_time"] = c.last_used_time;
  return v;
}

// The resource named in the path; a 404 for an unknown one, never an empty list.
Result<oauth::Resource> path_resource(Context& ctx) {
  oauth::ResourceStore resources(ctx.services.db);
  return resources.get(ctx.request.path_param("resource_id"));
}

Result<http::Response> create_client(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource resource, path_resource(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  oauth::ClientStore clients(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(
      oauth::RegisteredClient client,
      clients.register_from_request(oauth::ClientInfo::Kind::kPreregistered, resource, body));
  ctx.record(events::type::kClientRegistered,
             {.resource_id = resource.id, .client_id = client.client_id},
             oauth::registration_event_data(client));
  return http::Response::json(201, to_json(client));
}

Result<http::Response> list_clients(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource resource, path_resource(ctx));
  oauth::ClientStore clients(ctx.services.db);
  return listing_response(
      ctx, oauth::ClientStore::listing(resource.id), "clients",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return clients.list(resource.id, request, codec);
      },
      [](const oauth::RegisteredClient& c) { return to_json(c); });
}

Result<http::Response> delete_client(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource resource, path_resource(ctx));
  const std::string client_id = ctx.request.path_param("client_id");
  PORTCULLIS_RETURN_IF_ERROR(operations::delete_resource_client(ctx, resource, client_id));
  return http::Response::empty(204);
}

}  // namespace

void install_resource_client_routes(server::App& app) {
  add_collection_routes(app, "/api/v1/resources/{resource_id}/clients", "client_id",
                        {"resources:read", "resources:write"},
                        {create_client, list_clients, nullptr, nullptr, delete_client});
}

}  // namespace portcullis::api_worker
