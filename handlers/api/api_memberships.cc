#include "api_memberships.h"

#include "collection_routes.h"
#include "operations/organizations.h"
#include "organizations/membership_store.h"
#include "organizations/organization_store.h"
#include "user_json.h"

namespace portcullis::api_worker {
namespace {

using server::Context;

Result<http::Response> put_membership(Context& ctx) {
  std::string organization_id = ctx.request.path_param("organization_id");
  std::string user_id = ctx.request.path_param("user_id");
  PORTCULLIS_RETURN_IF_ERROR(organizations::check_organization_id(organization_id));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(organizations::MembershipFields fields, read_membership_fields(body));
  PORTCULLIS_ASSIGN_OR_RETURN(organizations::MembershipStore::Put put,
                              operations::put_membership(ctx, organization_id, user_id, fields));
  Json::Value out = membership_json(put.membership);
  out["user_id"] = put.membership.user_id;
  out["update_time"] = put.membership.update_time;
  return http::Response::json(put.created ? 201 : 200, out);
}

Result<http::Response> delete_membership(Context& ctx) {
  std::string organization_id = ctx.request.path_param("organization_id");
  std::string user_id = ctx.request.path_param("user_id");
  PORTCULLIS_RETURN_IF_ERROR(operations::remove_membership(ctx, organization_id, user_id));
  return http::Response::empty(204);
}

}  // namespace

void install_membership_routes(server::App& app) {
  const server::Auth write = management_scope("organizations:write");
  app.add("PUT", "/api/v1/organizations/{organization_id}/users/{user_id}",
          server::Route{.handler = put_membership, .auth = write});
  app.add("DELETE", "/api/v1/organizations/{organization_id}/users/{user_id}",
          server::Route{.handler = delete_membership, .auth = write});
}

}  // namespace portcullis::api_worker
