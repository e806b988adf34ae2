#include "api_directories.h"

#include "collection_routes.h"
#include "listing.h"
#include "operations/organizations.h"
#include "scim/directory_store.h"

namespace portcullis::api_worker {
namespace {

using scim::Directory;
using scim::DirectoryStore;
using server::Context;

Json::Value to_json(const Directory& d) {
  Json::Value v(Json::objectValue);
  v["id"] = d.id;
  v["organization_id"] = d.organization_id;
  v["name"] = d.name;
  v["create_time"] = d.create_time;
  if (!d.last_used_time.empty()) v["last_used_time"] = d.last_used_time;
  v["live_tokens"] = d.live_tokens;
  return v;
}

Result<http::Response> create_directory(Context& ctx) {
  const std::string organization_id = ctx.request.path_param("organization_id");
  std::string name = "SCIM directory";
  if (!ctx.request.body.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
    for (const auto& key : body.getMemberNames()) {
      if (key != "name") return Status::invalid_argument("unknown field " + key);
      if (!body[key].isString()) return Status::invalid_argument("name must be a string");
      name = body[key].asString();
    }
  }
  PORTCULLIS_ASSIGN_OR_RETURN(auto created,
                              operations::create_directory(ctx, organization_id, name));
  Json::Value out = to_json(created.first);
  out["token"] = created.second.token;
  http::Response r = http::Response::json(201, out);
  r.set_header("Location", ctx.services.config.base_url + "/api/v1/organizations/" +
                               organization_id + "/directories/" + created.first.id);
  return r;
}

Result<http::Response> get_directory(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Directory d, DirectoryStore(ctx.services.db)
                                               .get(ctx.request.path_param("organization_id"),
                                                    ctx.request.path_param("directory_id")));
  return http::Response::json(200, to_json(d));
}

Result<http::Response> list_directories(Context& ctx) {
  const std::string organization_id = ctx.request.path_param("organization_id");
  DirectoryStore store(ctx.services.db);
  return listing_response(
      ctx, DirectoryStore::listing(organization_id), "directories",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return store.list(organization_id, request, codec);
      },
      [](const Directory& d) { return to_json(d); });
}

Result<http::Response> rotate_token(Context& ctx) {
  const std::string organization_id = ctx.request.path_param("organization_id");
  const std::string directory_id = ctx.request.path_param("directory_id");
  PORTCULLIS_ASSIGN_OR_RETURN(scim::IssuedToken token, operations::rotate_directory_token(
                                                           ctx, organization_id, directory_id));
  Json::Value out(Json::objectValue);
  out["token"] = token.token;
  out["create_time"] = token.create_time;
  return http::Response::json(201, out);
}

Result<http::Response> delete_directory(Context& ctx) {
  const std::string organization_id = ctx.request.path_param("organization_id");
  const std::string directory_id = ctx.request.path_param("directory_id");
  PORTCULLIS_RETURN_IF_ERROR(operations::delete_directory(ctx, organization_id, directory_id));
  return http::Response::empty(204);
}

}  // namespace

void install_directory_routes(server::App& app) {
  add_collection_routes(
      app, "/api/v1/organizations/{organization_id}/directories", "directory_id",
      {"directories:write", "directories:write"},
      {create_directory, list_directories, get_directory, nullptr, delete_directory});
  app.add("POST", "/api/v1/organizations/{organization_id}/directories/{directory_id}/tokens",
          server::Route{.handler = rotate_token, .auth = management_scope("directories:write")});
}

}  // namespace portcullis::api_worker
