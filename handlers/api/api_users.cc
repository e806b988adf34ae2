#include "api_users.h"

#include <map>

#include "collection_routes.h"
#include "identity/identity_store.h"
#include "identity/user_listing.h"
#include "identity/user_store.h"
#include "listing.h"
#include "operations/users.h"
#include "organizations/organization_store.h"
#include "scim/scim_store.h"
#include "user_json.h"

namespace portcullis::api_worker {
namespace {

using identity::User;
using identity::UserStore;
using organizations::ListedUser;
using server::Context;

using Groups = std::map<std::string, std::vector<scim::UserGroup>>;
using Identities = std::map<std::string, std::vector<identity::Identity>>;

Json::Value listed_json(const ListedUser& u) {
  return user_json(u.user, u.memberships);
}

// The user's JSON with each membership's SCIM groups (docs/scim.md §5).
Json::Value with_groups(Json::Value v, const std::string& user_id, const Groups& groups) {
  auto it = groups.find(user_id);
  if (it == groups.end()) return v;
  for (auto& m : v["memberships"]) {
    for (const auto& g : it->second) {
      if (g.organization_id != m["organization_id"].asString()) continue;
      Json::Value group(Json::objectValue);
      group["id"] = g.group_id;
      group["display_name"] = g.display_name;
      m["groups"].append(group);
    }
  }
  return v;
}

// The accounts that sign the user in (contract §10 account linking): `identities`, left out
// when there is none.
Json::Value with_identities(Json::Value v, const std::string& user_id,
                            const Identities& identities) {
  auto it = identities.find(user_id);
  if (it == identities.end() || it->second.empty()) return v;
  v["identities"] = Json::Value(Json::arrayValue);
  for (const auto& i : it->second) {
    Json::Value one(Json::objectValue);
    one["provider"] = i.provider;
    one["subject"] = i.subject;
    if (!i.connection_id.empty()) one["connection_id"] = i.connection_id;
    one["create_time"] = i.create_time;
    v["identities"].append(one);
  }
  return v;
}

// A page of users and the SCIM groups and identities of its users.
template <typename Fetch>
auto with_page_groups(Context& ctx, Groups& groups, Identities& identities, Fetch fetch) {
  return [&ctx, &groups, &identities, fetch](
             const paging::PageRequest& request,
             const paging::TokenCodec& codec) -> Result<paging::Page<ListedUser>> {
    PORTCULLIS_ASSIGN_OR_RETURN(paging::Page<ListedUser> page, fetch(request, codec));
    std::vector<std::string> ids;
    for (const auto& u : page.items) ids.push_back(u.user.id);
    PORTCULLIS_ASSIGN_OR_RETURN(groups, scim::groups_of_users(ctx.services.db, ids));
    PORTCULLIS_ASSIGN_OR_RETURN(identities, identity::IdentityStore(ctx.services.db).of_users(ids));
    return page;
  };
}

// A user with all their memberships, as GET /users/{id} and the writes answer.
Result<Json::Value> full_json(Context& ctx, const User& u) {
  PORTCULLIS_ASSIGN_OR_RETURN(auto memberships,
                              organizations::MembershipStore(ctx.services.db).of_users({u.id}));
  PORTCULLIS_ASSIGN_OR_RETURN(Groups groups, scim::groups_of_users(ctx.services.db, {u.id}));
  PORTCULLIS_ASSIGN_OR_RETURN(Identities identities,
                              identity::IdentityStore(ctx.services.db).of_users({u.id}));
  return with_identities(with_groups(user_json(u, memberships[u.id]), u.id, groups), u.id,
                         identities);
}

Result<http::Response> create_user(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(identity::UserFields fields, read_user_fields(body));
  PORTCULLIS_ASSIGN_OR_RETURN(User u, UserStore(ctx.services.db).create(fields));
  ctx.record(events::type::kUserCreated, {.user_id = u.id});
  http::Response out = http::Response::json(201, user_json(u, {}));
  out.set_header("Location", ctx.services.config.base_url + "/api/v1/users/" + u.id);
  return out;
}

Result<http::Response> get_user(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(User u,
                              UserStore(ctx.services.db).get(ctx.request.path_param("user_id")));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, full_json(ctx, u));
  return http::Response::json(200, body);
}

Result<http::Response> update_user(Context& ctx) {
  const std::string id = ctx.request.path_param("user_id");
  // An unknown user is a 404 before the body is looked at.
  PORTCULLIS_RETURN_IF_ERROR(UserStore(ctx.services.db).get(id).status());
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(identity::UserFields fields, read_user_fields(body));
  PORTCULLIS_ASSIGN_OR_RETURN(User u,
                              operations::update_user(ctx, id, fields, body.getMemberNames()));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value out, full_json(ctx, u));
  return http::Response::json(200, out);
}

Result<http::Response> delete_user(Context& ctx) {
  UserStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(User u, store.get(ctx.request.path_param("user_id")));
  // The user's SCIM records go in the same transaction (their owner is scim::ScimStore).
  PORTCULLIS_RETURN_IF_ERROR(ctx.services.db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(scim::forget_user(ctx.services.db, u.id));
    return store.remove(u.id);
  }));
  ctx.record(events::type::kUserDeleted, {.user_id = u.id});
  return http::Response::empty(204);
}

Result<http::Response> list_users(Context& ctx) {
  Groups groups;
  Identities identities;
  return listing_response(
      ctx, UserStore::listing(), "users",
      with_page_groups(ctx, groups, identities,
                       [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
                         return organizations::list_environment_users(ctx.services.db, request,
                                                                      codec);
                       }),
      [&](const ListedUser& u) {
        return with_identities(with_groups(listed_json(u), u.user.id, groups), u.user.id,
                               identities);
      });
}

Result<http::Response> list_organization_users(Context& ctx) {
  // The id is checked before the query string: a malformed organization is a 400 whatever
  // the paging parameters say.
  std::string id = ctx.request.path_param("organization_id");
  PORTCULLIS_RETURN_IF_ERROR(organizations::check_organization_id(id));
  Groups groups;
  Identities identities;
  return listing_response(
      ctx, organizations::organization_users_listing(id), "users",
      with_page_groups(ctx, groups, identities,
                       [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
                         return organizations::list_organization_users(ctx.services.db, id, request,
                                                                       codec);
                       }),
      [&](const ListedUser& u) {
        return with_identities(with_groups(listed_json(u), u.user.id, groups), u.user.id,
                               identities);
      });
}

}  // namespace

void install_user_routes(server::App& app) {
  add_collection_routes(app, "/api/v1/users", "user_id", {"users:read", "users:write"},
                        {create_user, list_users, get_user, update_user, delete_user});
  app.add(
      "GET", "/api/v1/organizations/{organization_id}/users",
      server::Route{.handler = list_organization_users, .auth = management_scope("users:read")});
}

}  // namespace portcullis::api_worker
