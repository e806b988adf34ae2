// portcullis-scim: SCIM 2.0 under /scim/v2 (contract §9; docs/scim.md). Every route but the
// error pages authenticates a SCIM directory's bearer token and works inside that directory's
// organization. Parse, call lib/scim, render.
#include <algorithm>

#include "scim/patch.h"
#include "scim/schema.h"
#include "scim_auth.h"
#include "scim_http.h"
#include "server/worker_main.h"

namespace portcullis {
namespace {

using scim::ResourceKind;
using scim::ScimStore;
using server::Context;
using namespace scim_worker;

ScimStore store_of(Context& ctx) {
  return ScimStore(ctx.services.db, ctx.caller.organization_id, ctx.caller.id,
                   ctx.services.config.scim_checkpoint_every);
}

http::Response with_etag(http::Response r, const std::string& etag) {
  r.set_header("ETag", etag);
  return r;
}

// Users.

Json::Value render(const scim::ScimUser& u, const std::string& base) {
  return render_user(u, base);
}
Json::Value render(const scim::ScimGroup& g, const std::string& base) {
  return render_group(g, base);
}
ResourceKind kind_of(const scim::ScimUser&) {
  return ResourceKind::kUser;
}
ResourceKind kind_of(const scim::ScimGroup&) {
  return ResourceKind::kGroup;
}

// A user or group as the body of a 200/201, projected, with its ETag (and Location on 201).
template <typename T>
Result<http::Response> resource_response(Context& ctx, int status, const T& resource) {
  PORTCULLIS_ASSIGN_OR_RETURN(scim::Projection projection, read_projection(ctx));
  Json::Value body = scim::project(render(resource, scim_base(ctx)), projection, kind_of(resource));
  http::Response r = with_etag(scim_json(status, body), scim::etag(resource.version));
  if (status == 201) r.set_header("Location", body["meta"]["location"].asString());
  return r;
}

Result<http::Response> user_response(Context& ctx, int status, const scim::ScimUser& u) {
  return resource_response(ctx, status, u);
}

// A ListResponse: `fetch(query)` gives the page of users or groups.
template <typename Fetch>
Result<http::Response> list_with(Context& ctx, ResourceKind kind, const Json::Value* search,
                                 Fetch fetch) {
  PORTCULLIS_ASSIGN_OR_RETURN(ListParams p, read_list_params(ctx, kind, search));
  PORTCULLIS_ASSIGN_OR_RETURN(auto page, fetch(p.query));
  Json::Value resources(Json::arrayValue);
  const std::string base = scim_base(ctx);
  for (const auto& item : page.items) {
    resources.append(scim::project(render(item, base), p.projection, kind));
  }
  return scim_json(200, list_response(page.total, p.query.start_index, std::move(resources)));
}

// The data of the SCIM events (lib/events/types.def): names and ids, never attribute values
// beyond userName / displayName.
Json::Value user_data(const scim::ScimUser& u) {
  Json::Value data(Json::objectValue);
  data["user_name"] = u.attributes["userName"];
  return data;
}

Json::Value group_data(const scim::ScimGroup& g) {
  Json::Value data(Json::objectValue);
  data["group_id"] = g.id;
  data["display_name"] = g.display_name;
  return data;
}

Json::Value string_array(const std::vector<std::string>& values) {
  Json::Value out(Json::arrayValue);
  for (const auto& v : values) out.append(v);
  return out;
}

Result<http::Response> create_user(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, read_body(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value attributes, scim::read_user(body));
  PORTCULLIS_ASSIGN_OR_RETURN(scim::ScimUser u, store_of(ctx).create_user(attributes));
  record(ctx, events::type::kScimUserCreated, u.id, user_data(u));
  if (!u.active) record(ctx, events::type::kScimUserDeactivated, u.id, user_data(u));
  return user_response(ctx, 201, u);
}

Result<http::Response> get_user(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(scim::ScimUser u,
                              store_of(ctx).get_user(ctx.request.path_param("id")));
  auto none_match = ctx.request.header("if-none-match");
  if (none_match && (*none_match == scim::etag(u.version) || *none_match == "*")) {
    return with_etag(http::Response::empty(304), scim::etag(u.version));
  }
  return user_response(ctx, 200, u);
}

void record_change(Context& ctx, const scim::UserChange& c) {
  if (!c.changed) return;
  Json::Value data = user_data(c.user);
  if (c.deactivated) {
    record(ctx, events::type::kScimUserDeactivated, c.user.id, data);
    return;
  }
  data["fields"] = string_array(c.fields);
  record(ctx, events::type::kScimUserUpdated, c.user.id, data);
}

Result<http::Response> replace_user(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, read_body(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value attributes, scim::read_user(body));
  auto change = store_of(ctx).replace_user(ctx.request.path_param("id"), attributes, if_match(ctx));
  if (!change) return failure(change.status());
  record_change(ctx, *change);
  return user_response(ctx, 200, change->user);
}

Result<http::Response> patch_user(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, read_body(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(std::vector<scim::PatchOperation> ops, scim::read_patch(body));
  auto change = store_of(ctx).patch_user(ctx.request.path_param("id"), ops, if_match(ctx));
  if (!change) return failure(change.status());
  record_change(ctx, *change);
  return user_response(ctx, 200, change->user);
}

Result<http::Response> delete_user(Context& ctx) {
  const std::string id = ctx.request.path_param("id");
  auto deleted = store_of(ctx).delete_user(id, if_match(ctx));
  if (!deleted) return failure(deleted.status());
  record(ctx, events::type::kScimUserDeleted, id, user_data(*deleted));
  return http::Response::empty(204);
}

Result<http::Response> list_users_with(Context& ctx, const Json::Value* search) {
  ScimStore store = store_of(ctx);
  return list_with(ctx, ResourceKind::kUser, search,
                   [&](const scim::ListQuery& q) { return store.list_users(q); });
}

Result<http::Response> list_users(Context& ctx) {
  return list_users_with(ctx, nullptr);
}

// Groups.

Result<http::Response> group_response(Context& ctx, int status, const scim::ScimGroup& g) {
  return resource_response(ctx, status, g);
}

Result<http::Response> create_group(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, read_body(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(scim::GroupInput input, scim::read_group(body));
  if (Status st = check_member_count(input.member_ids.size()); !st.is_ok()) return failure(st);
  PORTCULLIS_ASSIGN_OR_RETURN(scim::ScimGroup g, store_of(ctx).create_group(input));
  record(ctx, events::type::kScimGroupCreated, "", group_data(g));
  return group_response(ctx, 201, g);
}

Result<http::Response> get_group(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(scim::Projection projection, read_projection(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(
      scim::ScimGroup g,
      store_of(ctx).get_group(ctx.request.path_param("id"), !projection.excludes("members")));
  auto none_match = ctx.request.header("if-none-match");
  if (none_match && (*none_match == scim::etag(g.version) || *none_match == "*")) {
    return with_etag(http::Response::empty(304), scim::etag(g.version));
  }
  return group_response(ctx, 200, g);
}

Result<http::Response> group_written(Context& ctx, const scim::GroupChange& change, bool patch) {
  if (change.changed) {
    Json::Value data = group_data(change.group);
    data["fields"] = string_array(change.fields);
    record(ctx, events::type::kScimGroupUpdated, "", data);
  }
  // Entra expects 204 for a group PATCH; a body only when the caller asks for attributes.
  if (patch && !ctx.request.query.has("attributes") &&
      !ctx.request.query.has("excludedAttributes")) {
    return with_etag(http::Response::empty(204), scim::etag(change.group.version));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(scim::Projection projection, read_projection(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(
      scim::ScimGroup g, store_of(ctx).get_group(change.group.id, !projection.excludes("members")));
  return group_response(ctx, 200, g);
}

Result<http::Response> replace_group(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, read_body(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(scim::GroupInput input, scim::read_group(body));
  if (Status st = check_member_count(input.member_ids.size()); !st.is_ok()) return failure(st);
  auto change = store_of(ctx).replace_group(ctx.request.path_param("id"), input, if_match(ctx));
  if (!change) return failure(change.status());
  return group_written(ctx, *change, false);
}

Result<http::Response> patch_group(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, read_body(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(std::vector<scim::PatchOperation> ops, scim::read_patch(body));
  const std::string id = ctx.request.path_param("id");
  PORTCULLIS_ASSIGN_OR_RETURN(scim::GroupPatch plan, scim::plan_group_patch(id, ops));
  size_t members = 0;
  for (const auto& m : plan.members) members += m.user_ids.size();
  if (Status st = check_member_count(members); !st.is_ok()) return failure(st);
  auto change = store_of(ctx).patch_group(id, plan, if_match(ctx));
  if (!change) return failure(change.status());
  return group_written(ctx, *change, true);
}

Result<http::Response> delete_group(Context& ctx) {
  const std::string id = ctx.request.path_param("id");
  auto deleted = store_of(ctx).delete_group(id, if_match(ctx));
  if (!deleted) return failure(deleted.status());
  record(ctx, events::type::kScimGroupDeleted, "", group_data(*deleted));
  return http::Response::empty(204);
}

Result<http::Response> list_groups_with(Context& ctx, const Json::Value* search) {
  ScimStore store = store_of(ctx);
  return list_with(ctx, ResourceKind::kGroup, search,
                   [&](const scim::ListQuery& q) { return store.list_groups(q); });
}

Result<http::Response> list_groups(Context& ctx) {
  return list_groups_with(ctx, nullptr);
}

// POST …/.search (RFC 7644 §3.4.3): a SearchRequest body instead of query parameters.
Result<Json::Value> read_search(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, read_body(ctx));
  const Json::Value* schemas = nullptr;
  for (const auto& key : body.getMemberNames()) {
    if (scim::iequals(key, "schemas")) schemas = &body[key];
  }
  bool ok = false;
  if (schemas && schemas->isArray()) {
    for (const auto& s : *schemas) {
      ok = ok || (s.isString() && scim::iequals(s.asString(), scim::kSearchRequest));
    }
  }
  if (!ok) return scim::invalid_syntax("schemas must list " + std::string(scim::kSearchRequest));
  return body;
}

Result<http::Response> search_users(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, read_search(ctx));
  return list_users_with(ctx, &body);
}

Result<http::Response> search_groups(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, read_search(ctx));
  return list_groups_with(ctx, &body);
}

// POST /.search at the root (RFC 7644 §3.4.3): Users then Groups, paged as one list. A filter
// naming attributes of only one resource type searches that type.
Result<http::Response> search_all(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, read_search(ctx));
  auto users = read_list_params(ctx, ResourceKind::kUser, &body);
  auto groups = read_list_params(ctx, ResourceKind::kGroup, &body);
  if (!users && !groups) return users.status();
  const ListParams& any = users ? *users : *groups;
  const int64_t start = any.query.start_index;
  const int64_t count = any.query.count;
  ScimStore store = store_of(ctx);
  const std::string base = scim_base(ctx);
  Json::Value resources(Json::arrayValue);
  int64_t user_total = 0;
  int64_t total = 0;
  if (users) {
    PORTCULLIS_ASSIGN_OR_RETURN(auto page, store.list_users(users->query));
    user_total = page.total;
    for (const auto& u : page.items) {
      resources.append(scim::project(render_user(u, base), users->projection, ResourceKind::kUser));
    }
  }
  total = user_total;
  if (groups) {
    scim::ListQuery q = groups->query;
    const int64_t taken = static_cast<int64_t>(resources.size());
    q.start_index = std::max<int64_t>(1, start - user_total);
    q.count = std::max<int64_t>(0, std::min(count, scim::kMaxResults) - taken);
    PORTCULLIS_ASSIGN_OR_RETURN(auto page, store.list_groups(q));
    total += page.total;
    for (const auto& g : page.items) {
      resources.append(
          scim::project(render_group(g, base), groups->projection, ResourceKind::kGroup));
    }
  }
  return scim_json(200, list_response(total, start, std::move(resources)));
}

// Discovery (RFC 7644 §4): filters are refused with 403.

Status no_filter(Context& ctx) {
  if (ctx.request.query.has("filter")) {
    return Status::permission_denied("discovery endpoints take no filter");
  }
  return Status::ok();
}

Result<http::Response> service_provider_config(Context& ctx) {
  PORTCULLIS_RETURN_IF_ERROR(no_filter(ctx));
  return scim_json(200, scim::service_provider_config(scim_base(ctx)));
}

const std::vector<const scim::Schema*>& schemas() {
  static const std::vector<const scim::Schema*> all = {
      &scim::user_schema(), &scim::enterprise_schema(), &scim::group_schema()};
  return all;
}

Result<http::Response> list_schemas(Context& ctx) {
  PORTCULLIS_RETURN_IF_ERROR(no_filter(ctx));
  Json::Value resources(Json::arrayValue);
  for (const auto* s : schemas()) resources.append(scim::schema_document(*s, scim_base(ctx)));
  return scim_json(200, list_response(resources.size(), 1, resources));
}

Result<http::Response> get_schema(Context& ctx) {
  PORTCULLIS_RETURN_IF_ERROR(no_filter(ctx));
  const std::string id = ctx.request.path_param("id");
  for (const auto* s : schemas()) {
    if (scim::iequals(s->id, id)) return scim_json(200, scim::schema_document(*s, scim_base(ctx)));
  }
  return Status::not_found("no schema " + id);
}

Result<http::Response> list_resource_types(Context& ctx) {
  PORTCULLIS_RETURN_IF_ERROR(no_filter(ctx));
  Json::Value resources(Json::arrayValue);
  resources.append(scim::resource_type_document(ResourceKind::kUser, scim_base(ctx)));
  resources.append(scim::resource_type_document(ResourceKind::kGroup, scim_base(ctx)));
  return scim_json(200, list_response(2, 1, resources));
}

Result<http::Response> get_resource_type(Context& ctx) {
  PORTCULLIS_RETURN_IF_ERROR(no_filter(ctx));
  const std::string id = ctx.request.path_param("id");
  if (scim::iequals(id, "User")) {
    return scim_json(200, scim::resource_type_document(ResourceKind::kUser, scim_base(ctx)));
  }
  if (scim::iequals(id, "Group")) {
    return scim_json(200, scim::resource_type_document(ResourceKind::kGroup, scim_base(ctx)));
  }
  return Status::not_found("no resource type " + id);
}

Result<http::Response> not_implemented(Context&) {
  return http::error_response(http::Family::kScim,
                              Status::not_found("this SCIM feature is not implemented"), 501);
}

void install_routes(server::App& app) {
  app.set_authenticator(server::AuthKind::kScimToken, scim::authenticate_scim_token);
  server::Auth auth{server::AuthKind::kScimToken, ""};
  auto add = [&](const char* method, const std::string& path, server::Handler h) {
    app.add(method, "/scim/v2" + path, server::Route{.handler = std::move(h), .auth = auth});
  };
  add("POST", "/Users/.search", search_users);
  add("GET", "/Users", list_users);
  add("POST", "/Users", create_user);
  add("GET", "/Users/{id}", get_user);
  add("PUT", "/Users/{id}", replace_user);
  add("PATCH", "/Users/{id}", patch_user);
  add("DELETE", "/Users/{id}", delete_user);
  add("POST", "/Groups/.search", search_groups);
  add("GET", "/Groups", list_groups);
  add("POST", "/Groups", create_group);
  add("GET", "/Groups/{id}", get_group);
  add("PUT", "/Groups/{id}", replace_group);
  add("PATCH", "/Groups/{id}", patch_group);
  add("DELETE", "/Groups/{id}", delete_group);
  add("GET", "/ServiceProviderConfig", service_provider_config);
  add("GET", "/Schemas", list_schemas);
  add("GET", "/Schemas/{id}", get_schema);
  add("GET", "/ResourceTypes", list_resource_types);
  add("GET", "/ResourceTypes/{id}", get_resource_type);
  add("POST", "/Bulk", not_implemented);
  add("GET", "/Me", not_implemented);
  add("POST", "/.search", search_all);
}

}  // namespace
}  // namespace portcullis

int main(int argc, char** argv) {
  return portcullis::server::worker_main(
      argc, argv, {"scim", portcullis::http::Family::kScim, portcullis::install_routes});
}
