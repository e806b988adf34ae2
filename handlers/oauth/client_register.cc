#include "client_register.h"

#include <optional>

#include "clients/clients.h"
#include "clients/resources.h"
#include "core/time.h"
#include "log/log.h"
#include "ratelimit/limiter.h"

namespace portcullis::oauth_worker {
namespace {

using server::Context;

// Checks in the order that tells a caller the most without giving anything away: the
// resource (404), its DCR switch (403), the caller's rate (429, counted whether or not the
// request is valid, so malformed requests cannot probe for free), then the metadata (400).
Result<http::Response> client_register(Context& ctx) {
  oauth::ResourceStore resources(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource resource,
                              resources.get(ctx.request.path_param("resource_id")));
  if (!resource.dcr_enabled) {
    return Status::permission_denied("dynamic client registration is disabled for this resource")
        .with_reason("access_denied");
  }
  ratelimit::Limiter limiter(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(
      ratelimit::Decision decision,
      limiter.hit("dcr:ip:" + ctx.request.remote_addr,
                  ctx.services.config.rate_limits.dcr_per_minute_per_ip, 60, unix_now()));
  if (!decision.allowed) return ratelimit::too_many_requests(decision, "client registrations");

  auto body = ctx.request.json_object();
  if (!body) {
    return Status::invalid_argument(body.status().message()).with_reason("invalid_client_metadata");
  }
  oauth::ClientStore clients(ctx.services.db);
  // The client and client.registered in one transaction (docs/events.md, "Recording").
  std::optional<oauth::RegisteredClient> client;
  PORTCULLIS_RETURN_IF_ERROR(ctx.services.db.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(
        client, clients.register_from_request(oauth::ClientInfo::Kind::kDcr, resource, *body));
    events::Event e = ctx.event(events::type::kClientRegistered);
    e.resource_id = resource.id;
    e.client_id = client->client_id;
    e.data = oauth::registration_event_data(*client);
    return ctx.write_event(std::move(e));
  }));

  http::Response r = http::Response::json(201, oauth::registration_response(*client));
  r.set_header("Cache-Control", "no-store");  // it may carry a client secret
  r.set_header("Pragma", "no-cache");
  return r;
}

Status prune_dcr_clients(server::Services& services) {
  oauth::ClientStore clients(services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t pruned, clients.prune(unix_now(), services.config.dcr_client_retention_seconds));
  if (pruned > 0)
    log::info("pruned unused DCR clients", {{"count", static_cast<long long>(pruned)}});
  return Status::ok();
}

}  // namespace

void install_registration(server::App& app) {
  app.add("POST", "/resources/{resource_id}/client_register",
          server::Route{.handler = client_register, .cors = true});
  app.add_periodic("prune-dcr-clients", 3600, prune_dcr_clients);
}

}  // namespace portcullis::oauth_worker
