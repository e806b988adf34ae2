#include "operations/organizations.h"

#include "dns/txt_lookup.h"
#include "domains/domain_name.h"
#include "format/json.h"
#include "scim/scim_store.h"

namespace portcullis::operations {
namespace {

constexpr size_t kMaxRecordsShown = 3;
constexpr size_t kMaxRecordBytesShown = 100;

Json::Value display_name_data(const organizations::Organization& o) {
  Json::Value data(Json::objectValue);
  data["display_name"] = o.display_name;
  return data;
}

// The data every domain event carries, on top of `data`.
Json::Value domain_data(const domains::Domain& d, Json::Value data) {
  data["domain_id"] = d.id;
  data["domain"] = d.domain;
  return data;
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
// can fix it by publishing the record and trying again, and a DNS outage is not the caller's
// failure (never a 5xx).
Status check_dns(server::Context& ctx, const domains::Domain& d) {
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

void record_directory(server::Context& ctx, const events::EventType& type,
                      const std::string& organization_id, const std::string& directory_id) {
  Json::Value data(Json::objectValue);
  data["directory_id"] = directory_id;
  ctx.record(type, {.organization_id = organization_id}, data);
}

}  // namespace

Result<organizations::Organization> create_organization(
    server::Context& ctx, const organizations::OrganizationFields& fields) {
  PORTCULLIS_ASSIGN_OR_RETURN(organizations::Organization o,
                              organizations::OrganizationStore(ctx.services.db).create(fields));
  ctx.record(events::type::kOrganizationCreated, {.organization_id = o.id}, display_name_data(o));
  return o;
}

Result<organizations::Organization> update_organization(
    server::Context& ctx, const std::string& id, const organizations::OrganizationFields& fields,
    const std::vector<std::string>& changed) {
  PORTCULLIS_RETURN_IF_ERROR(organizations::check_organization_id(id));
  organizations::Organization o;
  store::Db& db = ctx.services.db;
  PORTCULLIS_RETURN_IF_ERROR(db.transaction([&]() -> Status {
    // A new scim_group_roles re-evaluates the roles of the mapped groups' members (lib/scim).
    Json::Value previous;
    if (fields.scim_group_roles) {
      PORTCULLIS_ASSIGN_OR_RETURN(previous, scim::lock_group_roles(db, id));
    }
    PORTCULLIS_ASSIGN_OR_RETURN(o, organizations::OrganizationStore(db).update(id, fields));
    if (fields.scim_group_roles) return scim::reapply_group_roles(db, id, previous);
    return Status::ok();
  }));
  Json::Value data(Json::objectValue);
  data["fields"] = Json::Value(Json::arrayValue);
  for (const auto& key : changed) data["fields"].append(key);
  ctx.record(events::type::kOrganizationUpdated, {.organization_id = o.id}, data);
  return o;
}

Result<organizations::Organization> delete_organization(server::Context& ctx,
                                                        const std::string& id) {
  organizations::OrganizationStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(organizations::Organization o, store.get(id));
  // Its SCIM directories, users and groups go in the same transaction (their owner is
  // scim::ScimStore), after the organization's row lock.
  PORTCULLIS_RETURN_IF_ERROR(ctx.services.db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(store.remove(o.id));
    return scim::forget_organization(ctx.services.db, o.id);
  }));
  ctx.record(events::type::kOrganizationDeleted, {.organization_id = o.id}, display_name_data(o));
  return o;
}

Result<organizations::MembershipStore::Put> put_membership(
    server::Context& ctx, const std::string& organization_id, const std::string& user_id,
    const organizations::MembershipFields& fields) {
  PORTCULLIS_RETURN_IF_ERROR(organizations::check_organization_id(organization_id));
  PORTCULLIS_ASSIGN_OR_RETURN(
      organizations::MembershipStore::Put put,
      organizations::MembershipStore(ctx.services.db).put(organization_id, user_id, fields, "api"));
  ctx.record(put.created ? events::type::kMembershipCreated : events::type::kMembershipUpdated,
             {.organization_id = organization_id, .user_id = user_id});
  return put;
}

Status remove_membership(server::Context& ctx, const std::string& organization_id,
                         const std::string& user_id) {
  // The user's SCIM record in the organization goes in the same transaction (its owner is
  // scim::ScimStore): the directory no longer lists a user who is not a member.
  PORTCULLIS_RETURN_IF_ERROR(ctx.services.db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(
        organizations::MembershipStore(ctx.services.db).remove(organization_id, user_id));
    return scim::forget_membership(ctx.services.db, organization_id, user_id);
  }));
  ctx.record(events::type::kMembershipDeleted,
             {.organization_id = organization_id, .user_id = user_id});
  return Status::ok();
}

Result<domains::Domain> create_domain(server::Context& ctx, const std::string& organization_id,
                                      const std::string& name) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string normalized, domains::normalize_domain(name));
  PORTCULLIS_ASSIGN_OR_RETURN(
      domains::Domain d, domains::DomainStore(ctx.services.db).create(organization_id, normalized));
  ctx.record(events::type::kDomainCreated, {.organization_id = d.organization_id},
             domain_data(d, Json::Value(Json::objectValue)));
  return d;
}

Result<domains::Domain> verify_domain(server::Context& ctx, const std::string& organization_id,
                                      const std::string& domain_id, domains::VerifiedBy by) {
  domains::DomainStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(domains::Domain d, store.get(organization_id, domain_id));
  if (d.verified) return d;
  // Before asking DNS: a domain another organization holds can never be verified here.
  PORTCULLIS_RETURN_IF_ERROR(store.check_not_verified_elsewhere(organization_id, d.domain));
  if (by == domains::VerifiedBy::kDns) PORTCULLIS_RETURN_IF_ERROR(check_dns(ctx, d));
  PORTCULLIS_ASSIGN_OR_RETURN(domains::Domain verified, store.mark_verified(d, by));
  Json::Value data(Json::objectValue);
  data["method"] = verified.verified_by;
  ctx.record(events::type::kDomainVerified, {.organization_id = verified.organization_id},
             domain_data(verified, data));
  return verified;
}

Status delete_domain(server::Context& ctx, const std::string& organization_id,
                     const std::string& domain_id) {
  domains::DomainStore store(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(domains::Domain d, store.get(organization_id, domain_id));
  PORTCULLIS_RETURN_IF_ERROR(store.remove(organization_id, d.id));
  Json::Value data(Json::objectValue);
  data["status"] = d.verified ? "verified" : "pending";
  ctx.record(events::type::kDomainDeleted, {.organization_id = d.organization_id},
             domain_data(d, data));
  return Status::ok();
}

Result<std::pair<scim::Directory, scim::IssuedToken>> create_directory(
    server::Context& ctx, const std::string& organization_id, const std::string& name) {
  PORTCULLIS_ASSIGN_OR_RETURN(auto created,
                              scim::DirectoryStore(ctx.services.db).create(organization_id, name));
  record_directory(ctx, events::type::kDirectoryCreated, organization_id, created.first.id);
  return created;
}

Result<scim::IssuedToken> rotate_directory_token(server::Context& ctx,
                                                 const std::string& organization_id,
                                                 const std::string& directory_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      scim::IssuedToken token,
      scim::DirectoryStore(ctx.services.db).rotate(organization_id, directory_id));
  record_directory(ctx, events::type::kDirectoryTokenRotated, organization_id, directory_id);
  return token;
}

Status delete_directory(server::Context& ctx, const std::string& organization_id,
                        const std::string& directory_id) {
  PORTCULLIS_RETURN_IF_ERROR(
      scim::DirectoryStore(ctx.services.db).remove(organization_id, directory_id));
  record_directory(ctx, events::type::kDirectoryDeleted, organization_id, directory_id);
  return Status::ok();
}

}  // namespace portcullis::operations
