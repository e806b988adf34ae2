#include "api_connections.h"

#include "collection_routes.h"
#include "core/time.h"
#include "listing.h"
#include "organizations/organization_store.h"
#include "sso/connection_store.h"
#include "sso/oidc_client.h"
#include "sso/saml_sp.h"

namespace portcullis::api_worker {
namespace {

using server::Context;

void record(Context& ctx, const events::EventType& type, const sso::Connection& c) {
  Json::Value data(Json::objectValue);
  data["connection_id"] = c.id;
  data["type"] = c.type;
  data["state"] = c.state;
  ctx.record(type, {.organization_id = c.organization_id}, data);
}

Result<std::string> existing_organization(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(organizations::Organization o,
                              organizations::OrganizationStore(ctx.services.db)
                                  .get(ctx.request.path_param("organization_id")));
  return o.id;
}

sso::ConnectionStore store_of(Context& ctx) {
  return sso::ConnectionStore(ctx.services.db, ctx.services.master_key);
}

http::Response answer(Context& ctx, int status, const sso::Connection& c) {
  return http::Response::json(status, sso::to_json(c, ctx.services.config.base_url));
}

// "Active only when it tests valid": the configuration is complete and, for OIDC, the issuer's
// discovery document is reachable through the SSRF guard and names this issuer.
// For SAML: the IdP metadata (fetched once from idp_metadata_url through the guard, then kept
// as idp_metadata_xml) must give Lasso exactly one IdP with an HTTP-Redirect SSO service.
Status test_connection(Context& ctx, sso::Connection& c) {
  PORTCULLIS_RETURN_IF_ERROR(sso::check_complete(c));
  outbound::Options options;
  options.allow_hosts = ctx.services.config.outbound_allow_hosts;
  options.ca_file = ctx.services.config.outbound_ca_file;
  if (c.type == "saml") {
    if (c.idp_metadata_xml.empty() && !c.idp_metadata_url.empty()) {
      options.accept = "application/samlmetadata+xml, application/xml, text/xml";
      options.max_body_bytes = 256 * 1024;
      auto fetched = outbound::https_get(c.idp_metadata_url, options);
      if (!fetched || fetched->status != 200) {
        return Status::failed_precondition(
            "the IdP metadata could not be fetched from "
            "idp_metadata_url");
      }
      c.idp_metadata_xml = fetched->body;
    }
    return sso::check_idp_metadata(c, sso::sp_of(ctx.services.config.base_url, c.id));
  }
  sso::OidcClient client(sso::OidcClientConfig{c.issuer, c.client_id, "", c.scopes}, options);
  if (auto meta = client.discover(unix_now()); !meta) {
    return Status::failed_precondition("the issuer's discovery document could not be used: " +
                                       meta.status().message());
  }
  return Status::ok();
}

Result<http::Response> create_connection(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  sso::Connection c;
  c.organization_id = org;
  std::optional<std::string> secret;
  PORTCULLIS_RETURN_IF_ERROR(sso::apply_body(body, false, c, secret));
  sso::ConnectionStore store = store_of(ctx);
  PORTCULLIS_RETURN_IF_ERROR(store.create(c, secret));
  record(ctx, events::type::kConnectionCreated, c);
  http::Response out = answer(ctx, 201, c);
  out.set_header("Location", ctx.services.config.base_url + "/api/v1/organizations/" + org +
                                 "/connections/" + c.id);
  return out;
}

Result<http::Response> list_connections(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  sso::ConnectionStore store = store_of(ctx);
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
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c,
                              store_of(ctx).get(org, ctx.request.path_param("connection_id")));
  return answer(ctx, 200, c);
}

Result<http::Response> update_connection(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  sso::ConnectionStore store = store_of(ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c,
                              store.get(org, ctx.request.path_param("connection_id")));
  const std::string was = c.state;
  std::optional<std::string> secret;
  PORTCULLIS_RETURN_IF_ERROR(sso::apply_body(body, true, c, secret));
  if (secret) c.has_client_secret = true;
  // An active connection is re-tested whenever it changes, so it never stays active broken.
  if (c.state == "active") PORTCULLIS_RETURN_IF_ERROR(test_connection(ctx, c));
  PORTCULLIS_RETURN_IF_ERROR(store.update(c, secret));
  record(ctx, events::type::kConnectionUpdated, c);
  if (was != "active" && c.state == "active") record(ctx, events::type::kConnectionActivated, c);
  if (was == "active" && c.state != "active") record(ctx, events::type::kConnectionDeactivated, c);
  return answer(ctx, 200, c);
}

Result<http::Response> delete_connection(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  sso::ConnectionStore store = store_of(ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c,
                              store.get(org, ctx.request.path_param("connection_id")));
  PORTCULLIS_RETURN_IF_ERROR(store.remove(org, c.id));
  record(ctx, events::type::kConnectionDeleted, c);
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
