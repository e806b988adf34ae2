#include "operations/connections.h"

#include "core/time.h"
#include "outbound/https_get.h"
#include "sso/oidc_client.h"
#include "sso/saml_sp.h"

namespace portcullis::operations {
namespace {

void record(server::Context& ctx, const events::EventType& type, const sso::Connection& c) {
  Json::Value data(Json::objectValue);
  data["connection_id"] = c.id;
  data["type"] = c.type;
  data["state"] = c.state;
  ctx.record(type, {.organization_id = c.organization_id}, data);
}

}  // namespace

sso::ConnectionStore connection_store(server::Context& ctx) {
  return sso::ConnectionStore(ctx.services.db, ctx.services.master_key);
}

Status test_connection(server::Context& ctx, sso::Connection& c) {
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

Status create_connection(server::Context& ctx, sso::Connection& c,
                         const std::optional<std::string>& client_secret) {
  PORTCULLIS_RETURN_IF_ERROR(connection_store(ctx).create(c, client_secret));
  record(ctx, events::type::kConnectionCreated, c);
  return Status::ok();
}

Status update_connection(server::Context& ctx, sso::Connection& c, const std::string& was,
                         const std::optional<std::string>& client_secret) {
  if (client_secret) c.has_client_secret = true;
  // An active connection is re-tested whenever it changes, so it never stays active broken.
  if (c.state == "active") PORTCULLIS_RETURN_IF_ERROR(test_connection(ctx, c));
  PORTCULLIS_RETURN_IF_ERROR(connection_store(ctx).update(c, client_secret));
  record(ctx, events::type::kConnectionUpdated, c);
  if (was != "active" && c.state == "active") record(ctx, events::type::kConnectionActivated, c);
  if (was == "active" && c.state != "active") record(ctx, events::type::kConnectionDeactivated, c);
  return Status::ok();
}

Status delete_connection(server::Context& ctx, const sso::Connection& c) {
  PORTCULLIS_RETURN_IF_ERROR(connection_store(ctx).remove(c.organization_id, c.id));
  record(ctx, events::type::kConnectionDeleted, c);
  return Status::ok();
}

}  // namespace portcullis::operations
