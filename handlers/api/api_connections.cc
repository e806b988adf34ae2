#include "api_connections.h"

#include "collection_routes.h"
#include "listing.h"
#include "operations/connections.h"
#include "organizations/organization_store.h"
#include "sso/connection_store.h"

namespace portcullis::api_worker {
namespace {

using server::Context;

Result<std::string> existing_organization(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(organizations::Organization o,
                              organizations::OrganizationStore(ctx.services.db)
                                  .get(ctx.request.path_param("organization_id")));
  return o.id;
}

using operations::connection_store;

http::Response answer(Context& ctx, int status, const sso::Connection& c) {
  return http::Response::json(status, sso::to_json(c, ctx.services.config.base_url));
}

Result<http::Response> create_connection(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  sso::Connection c;
  c.organization_id = org;
  std::optional<std::string> secret;
  PORTCULLIS_RETURN_IF_ERROR(sso::apply_body(body, false, c, secret));
  PORTCULLIS_RETURN_IF_ERROR(operations::create_connection(ctx, c, secret));
  http::Response out = answer(ctx, 201, c);
  out.set_header("Location", ctx.services.config.base_url + "/api/v1/organizations/" + org +
                                 "/connections/" + c.id);
  return out;
}

Result<http::Response> list_connections(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  sso::ConnectionStore store = connection_store(ctx);
  const std::string base = ctx.services.config.base_url;
  return listing_response(
      ctx, sso::ConnectionStore::listing(org), "connections",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return store.list(org, request, codec);
      },
      [&base](const sso::Connection& c) { return sso::to_json(c, base); });
}

Result<http::Response> get_connection(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(
      sso::Connection c, connection_store(ctx).get(org, ctx.request.path_param("connection_id")));
  return answer(ctx, 200, c);
}

Result<http::Response> update_connection(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  sso::ConnectionStore store = connection_store(ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c,
                              store.get(org, ctx.request.path_param("connection_id")));
  const std::string was = c.state;
  std::optional<std::string> secret;
  PORTCULLIS_RETURN_IF_ERROR(sso::apply_body(body, true, c, secret));
  PORTCULLIS_RETURN_IF_ERROR(operations::update_connection(ctx, c, was, secret));
  return answer(ctx, 200, c);
}

Result<http::Response> delete_connection(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  sso::ConnectionStore store = connection_store(ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c,
                              store.get(org, ctx.request.path_param("connection_id")));
  PORTCULLIS_RETURN_IF_ERROR(operations::delete_connection(ctx, c));
  return http::Response::empty(204);
}

}  // namespace

void install_connection_routes(server::App& app) {
  add_collection_routes(
      app, "/api/v1/organizations/{organization_id}/connections", "connection_id",
      {"organizations:write", "organizations:write"},
      {create_connection, list_connections, get_connection, update_connection, delete_connection});
}

}  // namespace portcullis::api_worker
