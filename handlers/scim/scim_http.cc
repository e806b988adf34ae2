#include "scim_http.h"

#include <charconv>

#include "format/json.h"
#include "format/utf8.h"
#include "scim/filter_sql.h"

namespace portcullis::scim_worker {

std::string scim_base(const server::Context& ctx) {
  return ctx.services.config.base_url + "/scim/v2";
}

http::Response scim_json(int status, const Json::Value& body) {
  return http::Response::json(status, body, "application/scim+json");
}

Result<Json::Value> read_body(const server::Context& ctx) {
  const std::string type = ctx.request.content_type();
  if (type != "application/scim+json" && type != "application/json") {
    return scim::invalid_syntax("Content-Type must be application/scim+json or application/json");
  }
  if (!utf8::is_valid(ctx.request.body)) return scim::invalid_syntax("the body is not valid UTF-8");
  // A member list of kMaxMembersPerRequest {"value","display"} objects is three values a member:
  // more than the generic cap of the other families (format/json.h), still bounded.
  auto parsed = json::parse(ctx.request.body, json::kDefaultMaxDepth, kMaxBodyValues);
  if (!parsed) {
    return scim::invalid_syntax("request body is not valid JSON: " + parsed.status().message());
  }
  if (!parsed->isObject()) return scim::invalid_syntax("request body must be a JSON object");
  return parsed;
}

Status check_member_count(size_t members) {
  if (members <= scim::kMaxMembersPerRequest) return Status::ok();
  return Status::invalid_argument(
             "a request names at most " + std::to_string(scim::kMaxMembersPerRequest) +
             " group members; send larger changes as several PATCH add or remove requests")
      .with_reason("tooManyMembers");
}

std::optional<std::string> if_match(const server::Context& ctx) {
  return ctx.request.header("if-match");
}

Result<http::Response> failure(const Status& status) {
  if (status.reason() == "versionMismatch") {
    return http::error_response(http::Family::kScim, status, 412);
  }
  // RFC 7644 §3.12: 413 "one or more of the limits for this request have been exceeded".
  if (status.reason() == "tooManyMembers") {
    return http::error_response(http::Family::kScim, status, 413);
  }
  return status;
}

namespace {

Result<int64_t> integer_param(const std::string& name, const std::string& text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || text.empty()) {
    return scim::invalid_value(name + " must be an integer");
  }
  return v;
}

// A member of the SearchRequest body or the query parameter, as text.
Result<std::optional<std::string>> param(const server::Context& ctx, const Json::Value* body,
                                         const std::string& name) {
  if (body) {
    for (const auto& key : body->getMemberNames()) {
      if (!scim::iequals(key, name)) continue;
      const Json::Value& v = (*body)[key];
      if (v.isString()) return std::optional<std::string>(v.asString());
      if (v.isIntegral()) return std::optional<std::string>(std::to_string(v.asInt64()));
      if (v.isArray()) {
        std::string joined;
        for (const auto& item : v) {
          if (!item.isString()) return scim::invalid_value(name + " must be a list of strings");
          joined += (joined.empty() ? "" : ",") + item.asString();
        }
        return std::optional<std::string>(joined);
      }
      return scim::invalid_value(name + " has the wrong type");
    }
    return std::optional<std::string>();
  }
  for (const auto& [k, v] : ctx.request.query.all()) {
    if (scim::iequals(k, name)) return std::optional<std::string>(v);
  }
  return std::optional<std::string>();
}

}  // namespace

Result<scim::Projection> read_projection(const server::Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(auto attributes, param(ctx, nullptr, "attributes"));
  PORTCULLIS_ASSIGN_OR_RETURN(auto excluded, param(ctx, nullptr, "excludedAttributes"));
  return scim::parse_projection(attributes.value_or(""), excluded.value_or(""));
}

Result<ListParams> read_list_params(const server::Context& ctx, scim::ResourceKind kind,
                                    const Json::Value* body) {
  ListParams p;
  PORTCULLIS_ASSIGN_OR_RETURN(auto start, param(ctx, body, "startIndex"));
  PORTCULLIS_ASSIGN_OR_RETURN(auto count, param(ctx, body, "count"));
  PORTCULLIS_ASSIGN_OR_RETURN(auto filter, param(ctx, body, "filter"));
  PORTCULLIS_ASSIGN_OR_RETURN(auto sort_by, param(ctx, body, "sortBy"));
  PORTCULLIS_ASSIGN_OR_RETURN(auto sort_order, param(ctx, body, "sortOrder"));
  PORTCULLIS_ASSIGN_OR_RETURN(auto attributes, param(ctx, body, "attributes"));
  PORTCULLIS_ASSIGN_OR_RETURN(auto excluded, param(ctx, body, "excludedAttributes"));
  if (start) {
    PORTCULLIS_ASSIGN_OR_RETURN(int64_t s, integer_param("startIndex", *start));
    p.query.start_index = s < 1 ? 1 : s;  // RFC 7644 §3.4.2.4: below 1 is 1
  }
  p.query.count = 100;
  if (count) {
    PORTCULLIS_ASSIGN_OR_RETURN(int64_t c, integer_param("count", *count));
    p.query.count = c < 0 ? 0 : std::min<int64_t>(c, scim::kMaxResults);
  }
  if (filter && !filter->empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(auto parsed, scim::parse_filter(*filter));
    PORTCULLIS_ASSIGN_OR_RETURN(scim::SqlCondition cond, scim::compile_filter(*parsed, kind));
    p.query.filter = std::move(cond);
  }
  if (sort_by && !sort_by->empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(p.query.sort_expression, scim::sort_expression(*sort_by, kind));
  }
  if (sort_order && !sort_order->empty()) {
    if (scim::iequals(*sort_order, "descending")) {
      p.query.descending = true;
    } else if (!scim::iequals(*sort_order, "ascending")) {
      return scim::invalid_value("sortOrder must be ascending or descending");
    }
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      p.projection, scim::parse_projection(attributes.value_or(""), excluded.value_or("")));
  p.query.with_members = !p.projection.excludes("members");
  return p;
}

namespace {

// [{"value","$ref","display","type"}] of (id, display) pairs.
Json::Value references(const std::vector<std::pair<std::string, std::string>>& items,
                       const std::string& location_prefix, const char* type) {
  Json::Value out(Json::arrayValue);
  for (const auto& [id, name] : items) {
    Json::Value r(Json::objectValue);
    r["value"] = id;
    r["$ref"] = location_prefix + id;
    r["display"] = name;
    r["type"] = type;
    out.append(r);
  }
  return out;
}

Json::Value meta(const char* type, const std::string& created, const std::string& modified,
                 const std::string& location, int64_t version) {
  Json::Value m(Json::objectValue);
  m["resourceType"] = type;
  m["created"] = created;
  m["lastModified"] = modified;
  m["location"] = location;
  m["version"] = scim::etag(version);
  return m;
}

}  // namespace

Json::Value render_user(const scim::ScimUser& u, const std::string& base) {
  Json::Value v(Json::objectValue);
  v["schemas"].append(std::string(scim::kUserSchema));
  const std::string ext(scim::kEnterpriseSchema);
  if (u.attributes.isMember(ext)) v["schemas"].append(ext);
  v["id"] = u.id;
  for (const auto& key : u.attributes.getMemberNames()) v[key] = u.attributes[key];
  if (!v.isMember("active")) v["active"] = true;
  if (!u.groups.empty()) v["groups"] = references(u.groups, base + "/Groups/", "direct");
  v["meta"] = meta("User", u.create_time, u.update_time, base + "/Users/" + u.id, u.version);
  return v;
}

Json::Value render_group(const scim::ScimGroup& g, const std::string& base) {
  Json::Value v(Json::objectValue);
  v["schemas"].append(std::string(scim::kGroupSchema));
  v["id"] = g.id;
  if (g.external_id) v["externalId"] = *g.external_id;
  v["displayName"] = g.display_name;
  if (g.members_loaded) v["members"] = references(g.members, base + "/Users/", "User");
  v["meta"] = meta("Group", g.create_time, g.update_time, base + "/Groups/" + g.id, g.version);
  return v;
}

Json::Value list_response(int64_t total, int64_t start_index, Json::Value resources) {
  Json::Value v(Json::objectValue);
  v["schemas"].append(std::string(scim::kListResponse));
  v["totalResults"] = static_cast<Json::Int64>(total);
  v["startIndex"] = static_cast<Json::Int64>(start_index);
  v["itemsPerPage"] = static_cast<Json::Int64>(resources.size());
  v["Resources"] = std::move(resources);
  return v;
}

void record(server::Context& ctx, const events::EventType& type, const std::string& user_id,
            Json::Value data) {
  data["directory_id"] = ctx.caller.id;
  // Context::record adds `by` (the directory).
  ctx.record(type, {.organization_id = ctx.caller.organization_id, .user_id = user_id},
             std::move(data));
}

}  // namespace portcullis::scim_worker
