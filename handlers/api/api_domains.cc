#include "api_domains.h"

#include "collection_routes.h"
#include "dns/txt_lookup.h"
#include "domains/domain_name.h"
#include "domains/domain_store.h"
#include "format/json.h"
#include "listing.h"
#include "organizations/organization_store.h"

namespace portcullis::api_worker {
namespace {

using server::Context;

constexpr size_t kMaxRecordsShown = 3;
constexpr size_t kMaxRecordBytesShown = 100;

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

// The data every domain event carries, on top of `data`.
Json::Value domain_data(const domains::Domain& d, Json::Value data) {
  data["domain_id"] = d.id;
  data["domain"] = d.domain;
  return data;
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
  return domains::normalize_domain(body["domain"].asString());
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

// The records found, for the error message: at most a few, shortened, as printable ASCII
// (a nameserver's bytes must not put control characters or bad UTF-8 into a JSON body).
std::string quoted_records(const std::vector<std::string>& records) {
  std::string out;
  for (size_t i = 0; i < records.size() && i < kMaxRecordsShown; ++i) {
    std::string shown = records[i].substr(0, kMaxRecordBytesShown);
    for (char& c : shown) {
      if (c < 0x20 || c > 0x7e) c = '?';
    }
    if (records[i].size() > kMaxRecordBytesShown) shown += "...";
    out += (i ? ", " : "") + json::write(Json::Value(shown));
  }
  if (records.size() > kMaxRecordsShown) {
    out += " and " + std::to_string(records.size() - kMaxRecordsShown) + " more";
  }
  return out;
}

// Does DNS hold the domain's verification record? Every way it does not is a
// failed_precondition (400) saying what was asked, of whom, and what came back: the caller
// can fix it by publishing the record and trying again, and a DNS outage is not the API's
// failure (never a 5xx).
Status check_dns(Context& ctx, const domains::Domain& d) {
  const std::string name = domains::verification_record_name(d.domain);
  const std::string want = domains::verification_record_value(d.verification_token);
  const std::string publish =
      ": publish a TXT record at " + name + " with the value \"" + want + "\", then verify again";
  auto found = dns::lookup_txt(ctx.services.config.dns_nameserver, name);
  if (!found) {
    return Status::failed_precondition(
        "the TXT lookup of " + name + " failed: " + found.status().message() + "; try again later");
  }
  const std::string asked = " (asked " + ctx.services.config.dns_nameserver.describe() + ")";
  switch (found->outcome) {
    case dns::TxtLookup::Outcome::kNoSuchName:
      return Status::failed_precondition(name + " does not exist in DNS" + asked + publish);
    case dns::TxtLookup::Outcome::kNoRecords:
      return Status::failed_precondition(name + " has no TXT record" + asked + publish);
    case dns::TxtLookup::Outcome::kRecords:
      for (const auto& r : found->records) {
        if (r == want) return Status::ok();
      }
      return Status::failed_precondition(name + " has no TXT record with the expected value" +
                                         asked + "; found " + quoted_records(found->records) +
                                         publish);
  }
  return Status::internal("unexpected DNS lookup outcome");
}

Result<http::Response> create_domain(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value body, ctx.request.json_object());
  PORTCULLIS_ASSIGN_OR_RETURN(std::string name, read_create(body));
  domains::DomainStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(domains::Domain d, store.create(org, name));
  ctx.record(events::type::kDomainCreated, {.organization_id = d.organization_id},
             domain_data(d, Json::Value(Json::objectValue)));
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
  domains::DomainStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(domains::Domain d,
                              store.get(org, ctx.request.path_param("domain_id")));
  if (d.verified) return http::Response::json(200, to_json(d));
  // Before asking DNS: a domain another organization holds can never be verified here.
  PORTCULLIS_RETURN_IF_ERROR(store.check_not_verified_elsewhere(org, d.domain));
  if (by == domains::VerifiedBy::kDns) PORTCULLIS_RETURN_IF_ERROR(check_dns(ctx, d));
  PORTCULLIS_ASSIGN_OR_RETURN(domains::Domain verified, store.mark_verified(d, by));
  Json::Value data(Json::objectValue);
  data["method"] = verified.verified_by;
  ctx.record(events::type::kDomainVerified, {.organization_id = verified.organization_id},
             domain_data(verified, data));
  return http::Response::json(200, to_json(verified));
}

Result<http::Response> delete_domain(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string org, existing_organization(ctx));
  domains::DomainStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(domains::Domain d,
                              store.get(org, ctx.request.path_param("domain_id")));
  PORTCULLIS_RETURN_IF_ERROR(store.remove(org, d.id));
  Json::Value data(Json::objectValue);
  data["status"] = d.verified ? "verified" : "pending";
  ctx.record(events::type::kDomainDeleted, {.organization_id = d.organization_id},
             domain_data(d, data));
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
