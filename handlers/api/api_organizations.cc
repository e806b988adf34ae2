#include "api_organizations.h"

#include <set>

#include "collection_routes.h"
#include "listing.h"
#include "operations/organizations.h"
#include "organizations/login_methods.h"
#include "organizations/organization_store.h"

namespace portcullis::api_worker {
namespace {

using organizations::Organization;
using organizations::OrganizationStore;
using server::Context;

Json::Value to_json(const Organization& o) {
  Json::Value v(Json::objectValue);
  v["id"] = o.id;
  v["display_name"] = o.display_name;
  if (o.external_id) v["external_id"] = *o.external_id;
  v["metadata"] = o.metadata;
  if (!o.scim_group_roles.empty()) v["scim_group_roles"] = o.scim_group_roles;
  if (o.login_methods) {
    v["login_methods"] = Json::Value(Json::arrayValue);
    for (const auto& m : *o.login_methods) v["login_methods"].append(m);
  }
  v["create_time"] = o.create_time;
  v["update_time"] = o.update_time;
  return v;
}

// The writable fields of a POST body or a PATCH (RFC 7396 merge patch: a member replaces the
// field, `null` clears it or puts it back to its default). Read-only fields are ignored so a
// GET body can be sent back; any other member is an error rather than silently dropped.
Result<organizations::OrganizationFields> read_fields(const Json::Value& body) {
  static const std::set<std::string> kReadOnly = {"id", "create_time", "update_time"};
  organizations::OrganizationFields f;
  for (const auto& key : body.getMemberNames()) {
    const Json::Value& v = body[key];
    if (key == "display_name") {
      if (!v.isString()) return Status::invalid_argument("display_name must be a string");
      f.display_name = v.asString();
    } else if (key == "external_id") {
      if (!v.isNull() && !v.isString()) {
        return Status::invalid_argument("external_id must be a string");
      }
      f.external_id = v.isNull() ? std::nullopt : std::optional<std::string>(v.asString());
    } else if (key == "metadata") {
      f.metadata = v.isNull() ? Json::Value(Json::objectValue) : v;
    } else if (key == "scim_group_roles") {
      f.scim_group_roles = v.isNull() ? Json::Value(Json::objectValue) : v;
    } else if (key == "login_methods") {
      // null: the organization allows whatever the environment offers.
      f.login_methods.emplace();
      if (!v.isNull()) {
        PORTCULLIS_ASSIGN_OR_RETURN(*f.login_methods,
                                    organizations::parse_login_methods(v, "login_methods"));
      }
    } else if (!kReadOnly.count(key)) {
      return Status::invalid_argument("unknown field " + key);
    }
  }
  return f;
}

Result<http::Response> create_organization(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(auto fields, read_fields(body));
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, operations::create_organization(ctx, fields));
  http::Response out = http::Response::json(201, to_json(o));
  out.set_header("Location", ctx.services.config.base_url + "/api/v1/organizations/" + o.id);
  return out;
}

Result<http::Response> list_organizations(Context& ctx) {
  OrganizationStore store(ctx.services.db);
  return listing_response(
      ctx, OrganizationStore::listing(), "organizations",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return store.list(request, codec);
      },
      [](const Organization& o) { return to_json(o); });
}

Result<http::Response> get_organization(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      Organization o,
      OrganizationStore(ctx.services.db).get(ctx.request.path_param("organization_id")));
  return http::Response::json(200, to_json(o));
}

Result<http::Response> update_organization(Context& ctx) {
  std::string id = ctx.request.path_param("organization_id");
  PORTCULLIS_RETURN_IF_ERROR(organizations::check_organization_id(id));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(auto fields, read_fields(body));
  PORTCULLIS_ASSIGN_OR_RETURN(
      Organization o, operations::update_organization(ctx, id, fields, body.getMemberNames()));
  return http::Response::json(200, to_json(o));
}

Result<http::Response> delete_organization(Context& ctx) {
  PORTCULLIS_RETURN_IF_ERROR(
      operations::delete_organization(ctx, ctx.request.path_param("organization_id")).status());
  return http::Response::empty(204);
}

}  // namespace

void install_organization_routes(server::App& app) {
  add_collection_routes(app, "/api/v1/organizations", "organization_id",
                        {"organizations:read", "organizations:write"},
                        {create_organization, list_organizations, get_organization,
                         update_organization, delete_organization});
}

}  // namespace portcullis::api_worker
