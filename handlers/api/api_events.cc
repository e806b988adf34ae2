#include "api_events.h"

#include "core/ids.h"
#include "events/event_store.h"
#include "identity/user_store.h"
#include "listing.h"

namespace portcullis::api_worker {
namespace {

using server::Context;

Result<http::Response> list_events(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(events::EventFilter filter,
                              events::parse_event_filter(ctx.request.query));
  events::EventStore store(ctx.services.db);
  return listing_response(
      ctx, events::event_listing(filter), "events",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return store.list(filter, request, codec);
      },
      [](const store::Row& row) { return events::event_json(row); });
}

Result<http::Response> user_access(Context& ctx) {
  std::string user_id = ctx.request.path_param("user_id");
  if (!is_valid_id(user_id, "usr_")) return Status::not_found("no such user");
  PORTCULLIS_RETURN_IF_ERROR(identity::UserStore(ctx.services.db).get(user_id).status());
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body,
                              events::EventStore(ctx.services.db).user_access(user_id));
  return http::Response::json(200, body);
}

}  // namespace

void install_event_routes(server::App& app) {
  server::Auth read{server::AuthKind::kManagementToken, "events:read"};
  app.add("GET", "/api/v1/events", server::Route{.handler = list_events, .auth = read});
  app.add("GET", "/api/v1/users/{user_id}/access",
          server::Route{.handler = user_access, .auth = read});
}

}  // namespace portcullis::api_worker
