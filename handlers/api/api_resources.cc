#include "api_resources.h"

#include <set>

#include "clients/resources.h"
#include "collection_routes.h"
#include "discovery/metadata.h"
#include "listing.h"
#include "operations/resources.h"
#include "paging/keyset.h"

namespace portcullis::api_worker {
namespace {

using server::Context;

Status invalid(std::string message) {
  return Status::invalid_argument(std::move(message));
}

Json::Value to_json(const oauth::Resource& r) {
  Json::Value v(Json::objectValue);
  v["id"] = r.id;
  v["name"] = r.name;
  v["server_url"] = r.server_url;
  v["dcr_enabled"] = r.dcr_enabled;
  v["cimd_enabled"] = r.cimd_enabled;
  v["access_token_ttl_seconds"] = r.access_token_ttl_seconds;
  v["access_token_signing_alg"] = std::string(jose::alg_name(r.access_token_signing_alg));
  v["scopes"] = Json::Value(Json::arrayValue);
  for (const auto& s : r.scopes) {
    Json::Value scope(Json::objectValue);
    scope["name"] = s.name;
    scope["description"] = s.description;
    v["scopes"].append(scope);
  }
  v["create_time"] = r.create_time;
  v["update_time"] = r.update_time;
  auto warnings = oauth::resource_warnings(r);
  if (!warnings.empty()) {
    v["warnings"] = Json::Value(Json::arrayValue);
    for (const auto& w : warnings) v["warnings"].append(w);
  }
  return v;
}

Result<std::vector<oauth::ScopeDef>> read_scopes(const Json::Value& value) {
  if (!value.isArray()) return invalid("scopes must be an array of {\"name\", \"description\"}");
  std::vector<oauth::ScopeDef> out;
  for (const auto& item : value) {
    if (!item.isObject()) return invalid("scopes must be an array of {\"name\", \"description\"}");
    for (const auto& key : item.getMemberNames()) {
      if (key != "name" && key != "description") return invalid("scopes: unknown field " + key);
    }
    const Json::Value& name = item["name"];
    const Json::Value& description = item["description"];
    if (!name.isString()) return invalid("every scope needs a string name");
    if (!description.isNull() && !description.isString()) {
      return invalid("a scope's description must be a string");
    }
    out.push_back(
        oauth::ScopeDef{name.asString(), description.isNull() ? "" : description.asString()});
  }
  return out;
}

// The writable fields of a POST body or a PATCH (RFC 7396 merge patch: a member replaces the
// field, `null` puts it back to its default, arrays are replaced whole). The read-only fields
// of a resource's representation are ignored, so a GET body can be sent back; anything else is
// an error, because a mistyped switch ("dcr_enable": false) silently ignored would leave
// registration open.
Result<oauth::ResourceFields> read_fields(const Json::Value& body) {
  static const std::set<std::string> kReadOnly = {"id", "create_time", "update_time", "warnings"};
  oauth::ResourceFields f;
  for (const auto& key : body.getMemberNames()) {
    const Json::Value& v = body[key];
    if (key == "name" || key == "server_url") {
      if (!v.isString()) return invalid(key + " must be a string");
      (key == "name" ? f.name : f.server_url) = v.asString();
    } else if (key == "dcr_enabled" || key == "cimd_enabled") {
      if (!v.isNull() && !v.isBool()) return invalid(key + " must be true or false");
      (key == "dcr_enabled" ? f.dcr_enabled : f.cimd_enabled) = v.isNull() || v.asBool();
    } else if (key == "access_token_ttl_seconds") {
      if (v.isNull()) {
        f.access_token_ttl_seconds = oauth::kDefaultAccessTokenTtlSeconds;
      } else if (!v.isIntegral() || !v.isInt()) {
        return invalid("access_token_ttl_seconds must be an integer");
      } else {
        f.access_token_ttl_seconds = v.asInt();
      }
    } else if (key == "access_token_signing_alg") {
      if (v.isNull()) {
        f.access_token_signing_alg = jose::JwsAlg::kRS256;
      } else if (!v.isString()) {
        return invalid("access_token_signing_alg must be a string");
      } else {
        PORTCULLIS_ASSIGN_OR_RETURN(f.access_token_signing_alg,
                                    oauth::parse_access_token_signing_alg(v.asString()));
      }
    } else if (key == "scopes") {
      if (v.isNull()) {
        f.scopes = std::vector<oauth::ScopeDef>();
      } else {
        PORTCULLIS_ASSIGN_OR_RETURN(f.scopes, read_scopes(v));
      }
    } else if (!kReadOnly.count(key)) {
      return invalid("unknown field " + key);
    }
  }
  return f;
}

using operations::resource_store;

Result<http::Response> create_resource(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::ResourceFields fields, read_fields(body));
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource r, operations::create_resource(ctx, fields));
  http::Response out = http::Response::json(201, to_json(r));
  out.set_header("Location", ctx.services.config.base_url + "/api/v1/resources/" + r.id);
  return out;
}

Result<http::Response> list_resources(Context& ctx) {
  auto store = resource_store(ctx);
  return listing_response(
      ctx, oauth::ResourceStore::listing(), "resources",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return store.list(request, codec);
      },
      [](const oauth::Resource& r) { return to_json(r); });
}

Result<http::Response> get_resource(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource r,
                              resource_store(ctx).get(ctx.request.path_param("resource_id")));
  return http::Response::json(200, to_json(r));
}

Result<http::Response> update_resource(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::ResourceFields fields, read_fields(body));
  PORTCULLIS_ASSIGN_OR_RETURN(
      oauth::Resource r, operations::update_resource(ctx, ctx.request.path_param("resource_id"),
                                                     fields, body.getMemberNames()));
  return http::Response::json(200, to_json(r));
}

Result<http::Response> delete_resource(Context& ctx) {
  PORTCULLIS_RETURN_IF_ERROR(
      operations::delete_resource(ctx, ctx.request.path_param("resource_id")).status());
  return http::Response::empty(204);
}

Result<http::Response> protected_resource_metadata(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource r,
                              resource_store(ctx).get(ctx.request.path_param("resource_id")));
  return http::Response::json(200, discovery::protected_resource_metadata(ctx.services.config, r));
}

}  // namespace

void install_resource_routes(server::App& app) {
  add_collection_routes(
      app, "/api/v1/resources", "resource_id", {"resources:read", "resources:write"},
      {create_resource, list_resources, get_resource, update_resource, delete_resource});
  app.add("GET", "/api/v1/resources/{resource_id}/protected-resource-metadata",
          server::Route{.handler = protected_resource_metadata,
                        .auth = management_scope("resources:read")});
}

}  // namespace portcullis::api_worker
