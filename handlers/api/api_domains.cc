#include "api_domains.h"

#include "collection_routes.h"
#include "domains/domain_name.h"
#include "domains/domain_store.h"
#include "listing.h"
#include "operations/organizations.h"
#include "organizations/organization_store.h"

namespace portcullis::api_worker {
namespace {

using server::Context;

Json::Value to_json(const domains::Domain& d) {
  Json::Value v(Json::objectValue);
  v["id"] = d.id;
  v["organization_id"] = d.organization_id;
  v["domain"] = d.domain;
  v["status"] = d.verified ? "verified" : "pending";
  if (d.verified) {
    v["verified_by"] = d.verified_by;
    v["verify_time"] = d.verify_time;
  }
  Json::Value record(Json::objectValue);
  record["type"] = "TXT";
  record["name"] = domains::verification_record_name(d.domain);
  record["value"] = domains::verification_record_value(d.verification_token);
  v["verification_record"] = record;
  v["create_time"] = d.create_time;
  v["update_time"] = d.update_time;
  return v;
}

// The organization the path names: 400 for a malformed id, 404 for an unknown one.
Result<std::string> existing_organization(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(organizations::Organization o,
                              organizations::OrganizationStore(ctx.services.db)
                                  .get(ctx.request.path_param("organization_id")));
  return o.id;
}

// The body of a create: {"domain": "example.com"}.
Result<std::string> read_create(const Json::Value& body) {
  for (const auto& key : body.getMemberNames()) {
    if (key != "domain") return Status::invalid_argument("unknown field " + key);
  }
  if (!body["domain"].isString()) return Status::invalid_argument("domain must be a string");
  return body["domain"].asString();
}

// The body of a verify: empty, {} or {"method": "dns"} check DNS; {"method": "admin"} marks the
// domain verified on the caller's word.
Result<domains::VerifiedBy> read_verify(const http::Request& request) {
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) {
    return domains::VerifiedBy::kDns;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, request.json_object());
  for (const auto& key : body.getMemberNames()) {
    if (key != "method") return Status::invalid_argument("unknown field " + key);
  }
  const Json::Value& method = body["method"];
  if (method.isNull()) return domains::VerifiedBy::kDns;
  if (method.isString() && method.asString() == "dns") return domains::VerifiedBy::kDns;
  if (method.isString() && method.asString() == "admin") return domains::VerifiedBy::kAdmin;
  return Status::invalid_argument("method must be \"dns\" or \"admin\"");
}

Result<http::Response> create_domain(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(std::string name, read_create(body));
  PORTCULLIS_ASSIGN_OR_RETURN(domains::Domain d, operations::create_domain(ctx, org, name));
  http::Response out = http::Response::json(201, to_json(d));
  out.set_header("Location", ctx.services.config.base_url + "/api/v1/organizations/" + org +
                                 "/domains/" + d.id);
  return out;
}

Result<http::Response> list_domains(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  domains::DomainStore store(ctx.services.db);
  return listing_response(
      ctx, domains::DomainStore::listing(org), "domains",
      [&](const paging::PageRequest& request, const paging::TokenCodec& codec) {
        return store.list(org, request, codec);
      },
      [](const domains::Domain& d) { return to_json(d); });
}

Result<http::Response> get_domain(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(
      domains::Domain d,
      domains::DomainStore(ctx.services.db).get(org, ctx.request.path_param("domain_id")));
  return http::Response::json(200, to_json(d));
}

Result<http::Response> verify_domain(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(domains::VerifiedBy by, read_verify(ctx.request));
  PORTCULLIS_ASSIGN_OR_RETURN(
      domains::Domain d,
      operations::verify_domain(ctx, org, ctx.request.path_param("domain_id"), by));
  return http::Response::json(200, to_json(d));
}

Result<http::Response> delete_domain(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  PORTCULLIS_RETURN_IF_ERROR(
      operations::delete_domain(ctx, org, ctx.request.path_param("domain_id")));
  return http::Response::empty(204);
}

}  // namespace

void install_domain_routes(server::App& app) {
  add_collection_routes(app, "/api/v1/organizations/{organization_id}/domains", "domain_id",
                        {"organizations:read", "organizations:write"},
                        {create_domain, list_domains, get_domain, nullptr, delete_domain});
  app.add("POST", "/api/v1/organizations/{organization_id}/domains/{domain_id}/verify",
          server::Route{.handler = verify_domain, .auth = management_scope("organizations:write")});
}

}  // namespace portcullis::api_worker
