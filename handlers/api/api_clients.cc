#include "api_clients.h"

#include "collection_routes.h"
#include "listing.h"
#include "management/api_clients.h"
#include "management/scopes.h"
#include "operations/management.h"
#include "paging/keyset.h"

namespace portcullis::api_worker {
namespace {

using server::Context;

Json::Value to_json(const management::ApiClient& c) {
  Json::Value v(Json::objectValue);
  v["client_id"] = c.id;
  v["name"] = c.name;
  v["scopes"] = Json::Value(Json::arrayValue);
  for (const auto& s : c.scopes) v["scopes"].append(s);
  v["create_time"] = c.create_time;
  return v;
}

Result<http::Response> create_client(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  const Json::Value& name = body["name"];
  if (!name.isString() || name.asString().empty() || name.asString().size() > 200) {
    return Status::invalid_argument("name must be a string of 1 to 200 characters");
  }
  const Json::Value& scopes_json = body["scopes"];
  if (!scopes_json.isArray() || scopes_json.empty()) {
    return Status::invalid_argument("scopes must be a non-empty array of management scopes");
  }
  std::vector<std::string> requested;
  for (const auto& s : scopes_json) {
    if (!s.isString()) return Status::invalid_argument("scopes must hold strings");
    requested.push_back(s.asString());
  }
  PORTCULLIS_ASSIGN_OR_RETURN(management::NewApiClient created,
                              operations::create_api_client(ctx, name.asString(), requested));
  Json::Value out = to_json(created.client);
  out["client_secret"] = created.secret;
  http::Response r = http::Response::json(201, out);
  r.set_header("Location", ctx.services.config.base_url + "/api/v1/clients/" + created.client.id);
  return r;
}

Result<http::Response> get_client(Context& ctx) {
  management::ApiClientStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(management::ApiClient c,
                              store.get(ctx.request.path_param("client_id")));
  return http::Response::json(200, to_json(c));
}

Result<http::Response> list_clients(Context& ctx) {
  management::ApiClientStore store(ctx.services.db);
  return listing_response(
      ctx, management::ApiClientStore::listing(), "clients",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return store.list(request, codec);
      },
      [](const management::ApiClient& c) { return to_json(c); });
}

Result<http::Response> delete_client(Context& ctx) {
  PORTCULLIS_RETURN_IF_ERROR(
      operations::delete_api_client(ctx, ctx.request.path_param("client_id")));
  return http::Response::empty(204);
}

}  // namespace

void install_api_client_routes(server::App& app) {
  add_collection_routes(app, "/api/v1/clients", "client_id", {},
                        {create_client, list_clients, get_client, nullptr, delete_client});
}

}  // namespace portcullis::api_worker
