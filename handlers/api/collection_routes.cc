#include "collection_routes.h"

namespace portcullis::api_worker {

server::Auth management_scope(std::string scope) {
  return server::Auth{server::AuthKind::kManagementToken, std::move(scope)};
}

void add_collection_routes(server::App& app, const std::string& path, std::string_view id_param,
                           const CollectionScopes& scopes, const CollectionHandlers& handlers) {
  const server::Auth read = management_scope(scopes.read);
  const server::Auth write = management_scope(scopes.write);
  const std::string item_path = path + "/{" + std::string(id_param) + "}";
  auto add = [&app](const char* method, const std::string& pattern, const server::Handler& handler,
                    const server::Auth& auth) {
    if (handler) app.add(method, pattern, server::Route{.handler = handler, .auth = auth});
  };
  add("POST", path, handlers.create, write);
  add("GET", path, handlers.list, read);
  add("GET", item_path, handlers.get, read);
  add("PATCH", item_path, handlers.update, write);
  add("DELETE", item_path, handlers.remove, write);
}

}  // namespace portcullis::api_worker
