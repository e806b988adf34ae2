#include "operations/resources.h"

#include "clients/clients.h"

namespace portcullis::operations {
namespace {

Json::Value name_and_url(const oauth::Resource& r) {
  Json::Value data(Json::objectValue);
  data["name"] = r.name;
  data["server_url"] = r.server_url;
  return data;
}

}  // namespace

oauth::ResourceStore resource_store(server::Context& ctx) {
  return oauth::ResourceStore(ctx.services.db, ctx.services.config.max_token_lifetime_seconds);
}

Result<oauth::Resource> create_resource(server::Context& ctx, const oauth::ResourceFields& fields) {
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource r, resource_store(ctx).create(fields));
  ctx.record(events::type::kResourceCreated, {.resource_id = r.id}, name_and_url(r));
  return r;
}

Result<oauth::Resource> update_resource(server::Context& ctx, const std::string& id,
                                        const oauth::ResourceFields& fields,
                                        const std::vector<std::string>& changed) {
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource r, resource_store(ctx).update(id, fields));
  Json::Value data(Json::objectValue);
  data["fields"] = Json::Value(Json::arrayValue);
  for (const auto& key : changed) data["fields"].append(key);
  ctx.record(events::type::kResourceUpdated, {.resource_id = r.id}, data);
  return r;
}

Result<oauth::Resource> delete_resource(server::Context& ctx, const std::string& id) {
  oauth::ResourceStore store = resource_store(ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource r, store.get(id));
  PORTCULLIS_RETURN_IF_ERROR(store.remove(r.id));
  ctx.record(events::type::kResourceDeleted, {.resource_id = r.id}, name_and_url(r));
  return r;
}

Status delete_resource_client(server::Context& ctx, const oauth::Resource& resource,
                              const std::string& client_id) {
  PORTCULLIS_RETURN_IF_ERROR(oauth::ClientStore(ctx.services.db).remove(resource.id, client_id));
  ctx.record(events::type::kClientDeleted, {.resource_id = resource.id, .client_id = client_id});
  return Status::ok();
}

}  // namespace portcullis::operations
