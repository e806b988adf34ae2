// The HTTP side of /scim/v2 (contract §9): request parsing (bodies, list parameters, ETags)
// and rendering of resources and list responses. The rules live in lib/scim.
#pragma once

#include <json/value.h>

#include <optional>
#include <string>

#include "scim/resource.h"
#include "scim/scim_store.h"
#include "server/app.h"

namespace portcullis::scim_worker {

std::string scim_base(const server::Context& ctx);
http::Response scim_json(int status, const Json::Value& body);

// The body of a POST/PUT/PATCH: application/scim+json or application/json, valid UTF-8, a
// JSON object (400 invalidSyntax otherwise).
Result<Json::Value> read_body(const server::Context& ctx);
inline constexpr size_t kMaxBodyValues = 3 * scim::kMaxMembersPerRequest + 1000;
// 413 beyond scim::kMaxMembersPerRequest members in one request (docs/scim.md "Limits").
Status check_member_count(size_t members);
std::optional<std::string> if_match(const server::Context& ctx);
// A store error as the response: a failed If-Match is 412, too many members 413, everything
// else the family's shape.
Result<http::Response> failure(const Status& status);

// startIndex, count, filter, sortBy, sortOrder, attributes, excludedAttributes from the query
// string (GET) or a SearchRequest body (POST .search).
struct ListParams {
  scim::ListQuery query;
  scim::Projection projection;
};
Result<ListParams> read_list_params(const server::Context& ctx, scim::ResourceKind kind,
                                    const Json::Value* search_body);
Result<scim::Projection> read_projection(const server::Context& ctx);

Json::Value render_user(const scim::ScimUser& u, const std::string& base);
Json::Value render_group(const scim::ScimGroup& g, const std::string& base);
Json::Value list_response(int64_t total, int64_t start_index, Json::Value resources);

void record(server::Context& ctx, const events::EventType& type, const std::string& user_id,
            Json::Value data = Json::Value(Json::objectValue));

}  // namespace portcullis::scim_worker
