#include "domains/domain_store.h"

#include "core/ids.h"
#include "core/time.h"
#include "crypto/random.h"

namespace portcullis::domains {
namespace {

constexpr const char* kColumns =
    "id, organization_id, domain, verification_token, status, verified_by, verify_time, "
    "create_time, update_time";
// 192 random bits: a token nobody can guess, so a record under the domain proves that its
// publisher saw this claim.
constexpr size_t kTokenBytes = 24;

Result<Domain> from_row(const store::Row& r) {
  Domain d;
  d.id = r.str(0);
  d.organization_id = r.str(1);
  d.domain = r.str(2);
  d.verification_token = r.str(3);
  d.verified = r.str(4) == "verified";
  d.verified_by = r.str(5);
  if (!r.is_null(6)) d.verify_time = db_time_to_rfc3339(r.str(6));
  d.create_time = db_time_to_rfc3339(r.str(7));
  d.update_time = db_time_to_rfc3339(r.str(8));
  return d;
}

Status not_found() {
  return Status::not_found("the organization has no such domain");
}

Status verified_elsewhere(const std::string& domain) {
  return Status::already_exists(domain + " is already verified by another organization");
}

}  // namespace

paging::Listing DomainStore::listing(const std::string& organization_id) {
  return paging::Listing{"organization_domains", organization_id};
}

Result<std::optional<std::string>> DomainStore::verified_owner(const std::string& domain) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT organization_id FROM organization_domains WHERE verified_domain = ?",
                {domain}));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].str(0));
}

Status DomainStore::check_not_verified_elsewhere(const std::string& organization_id,
                                                 const std::string& domain) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<std::string> owner, verified_owner(domain));
  if (owner && *owner != organization_id) return verified_elsewhere(domain);
  return Status::ok();
}

Result<Domain> DomainStore::create(const std::string& organization_id, const std::string& domain) {
  PORTCULLIS_RETURN_IF_ERROR(check_not_verified_elsewhere(organization_id, domain));
  Domain d;
  d.id = new_id("dom_");
  d.organization_id = organization_id;
  d.domain = domain;
  d.verification_token = crypto::random_token(kTokenBytes);
  std::string now = db_now();
  auto inserted = db_.execute(
      "INSERT INTO organization_domains (id, organization_id, domain, verification_token, "
      "status, create_time, update_time) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
      {d.id, organization_id, domain, d.verification_token, now, now});
  if (!inserted) {
    if (inserted.status().code() == Code::kAlreadyExists) {
      return Status::already_exists("the organization already claims " + domain);
    }
    return inserted.status();
  }
  d.create_time = db_time_to_rfc3339(now);
  d.update_time = d.create_time;
  return d;
}

Result<Domain> DomainStore::get(const std::string& organization_id, const std::string& id) {
  if (!is_valid_id(id, "dom_")) return not_found();
  static const std::string kSelectOne = std::string("SELECT ") + kColumns +
                                        " FROM organization_domains WHERE id = ? AND "
                                        "organization_id = ?";
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(kSelectOne, {id, organization_id}));
  if (rows.empty()) return not_found();
  return from_row(rows[0]);
}

Result<paging::Page<Domain>> DomainStore::list(const std::string& organization_id,
                                               const paging::PageRequest& request,
                                               const paging::TokenCodec& codec) {
  return paging::fetch_page_as<Domain>(
      db_, paging::rows_of_organization(kColumns, "organization_domains", organization_id), request,
      codec, from_row);
}

Result<Domain> DomainStore::mark_verified(const Domain& domain, VerifiedBy by) {
  if (domain.verified) return domain;
  const char* method = by == VerifiedBy::kDns ? "dns" : "admin";
  std::string now = db_now();
  // The unique key on verified_domain refuses a second organization, whatever raced.
  auto updated = db_.execute(
      "UPDATE organization_domains SET status = 'verified', verified_domain = domain, "
      "verified_by = ?, verify_time = ?, update_time = ? WHERE id = ? AND status = 'pending'",
      {std::string(method), now, now, domain.id});
  if (!updated) {
    if (updated.status().code() == Code::kAlreadyExists) return verified_elsewhere(domain.domain);
    return updated.status();
  }
  return get(domain.organization_id, domain.id);
}

Status DomainStore::remove(const std::string& organization_id, const std::string& id) {
  if (!is_valid_id(id, "dom_")) return not_found();
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t removed,
      db_.execute("DELETE FROM organization_domains WHERE id = ? AND organization_id = ?",
                  {id, organization_id}));
  if (removed == 0) return not_found();
  return Status::ok();
}

Status DomainStore::remove_all_of_organization(const std::string& organization_id) {
  return db_
      .execute("DELETE FROM organization_domains WHERE organization_id = ?", {organization_id})
      .status();
}

}  // namespace portcullis::domains
