// The routes of one collection of the management API (contract §7): `POST` (create) and `GET`
// (list) on the collection, `GET`, `PATCH` and `DELETE` on one of its items
// (`<path>/{<id_param>}`), each behind a management token with the collection's read or write
// scope. A handler left empty (nullptr) adds no route: the router answers 405 for it.
#pragma once

#include <string>
#include <string_view>

#include "server/app.h"

namespace portcullis::api_worker {

struct CollectionScopes {
  std::string read;   // "organizations:read"; empty = any management token
  std::string write;  // "organizations:write"; empty = any management token
};

struct CollectionHandlers {
  server::Handler create;
  server::Handler list;
  server::Handler get;
  server::Handler update;
  server::Handler remove;
};

void add_collection_routes(server::App& app, const std::string& path, std::string_view id_param,
                           const CollectionScopes& scopes, const CollectionHandlers& handlers);

// The Auth of a management API route that needs `scope` (empty = any management token).
server::Auth management_scope(std::string scope);

}  // namespace portcullis::api_worker
