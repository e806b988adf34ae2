#include "organizations/organization_store.h"

#include "core/ids.h"
#include "core/time.h"
#include "domains/domain_store.h"
#include "format/json.h"
#include "format/metadata.h"
#include "format/text.h"
#include "organizations/login_methods.h"
#include "organizations/membership_store.h"
#include "paging/counter.h"
#include "store/update_row.h"
#include "tokens/grant_revocation.h"

namespace portcullis::organizations {
namespace {

constexpr const char* kColumns =
    "id, display_name, external_id, metadata, create_time, update_time, scim_group_roles, "
    "login_methods";

Status invalid(std::string message) {
  return Status::invalid_argument(std::move(message));
}

Result<Organization> from_row(const store::Row& r) {
  Organization o;
  o.id = r.str(0);
  o.display_name = r.str(1);
  o.external_id = r.opt(2);
  o.metadata = format::parse_stored_metadata(r.str(3));
  o.create_time = db_time_to_rfc3339(r.str(4));
  o.update_time = db_time_to_rfc3339(r.str(5));
  if (!r.is_null(6)) {
    auto roles = json::parse(r.str(6));
    if (roles && roles->isObject()) o.scim_group_roles = *roles;
  }
  if (!r.is_null(7)) {
    auto methods = json::parse(r.str(7));
    if (!methods) return Status::internal("stored login_methods are not JSON");
    PORTCULLIS_ASSIGN_OR_RETURN(o.login_methods, parse_login_methods(*methods, "login_methods"));
  }
  return o;
}

void apply(Organization& o, const OrganizationFields& f) {
  if (f.display_name) o.display_name = *f.display_name;
  if (f.external_id) o.external_id = *f.external_id;
  if (f.metadata) o.metadata = *f.metadata;
  if (f.scim_group_roles) o.scim_group_roles = *f.scim_group_roles;
  if (f.login_methods) o.login_methods = *f.login_methods;
}

store::Value stored_login_methods(const Organization& o) {
  if (!o.login_methods) return store::Value(nullptr);
  Json::Value list(Json::arrayValue);
  for (const auto& m : *o.login_methods) list.append(m);
  return store::Value(json::write(list));
}

Status validate(const Organization& o) {
  PORTCULLIS_RETURN_IF_ERROR(
      text::check_display_text(o.display_name, "display_name", kMaxDisplayNameChars, true));
  if (o.external_id) {
    if (o.external_id->empty()) return invalid("external_id must not be empty");
    PORTCULLIS_RETURN_IF_ERROR(
        text::check_display_text(*o.external_id, "external_id", kMaxExternalIdChars, false));
  }
  PORTCULLIS_RETURN_IF_ERROR(check_scim_group_roles(o.scim_group_roles));
  return format::check_metadata(o.metadata);
}

Status duplicate_external_id(const Status& st) {
  if (st.code() != Code::kAlreadyExists) return st;
  return Status::already_exists("another organization already has this external_id");
}

}  // namespace

Status check_scim_group_roles(const Json::Value& roles) {
  if (!roles.isObject()) return invalid("scim_group_roles must be an object");
  if (roles.size() > kMaxScimGroupRoles) {
    return invalid("scim_group_roles maps at most " + std::to_string(kMaxScimGroupRoles) +
                   " groups");
  }
  for (const auto& group : roles.getMemberNames()) {
    PORTCULLIS_RETURN_IF_ERROR(
        text::check_display_text(group, "a scim_group_roles group name", 256, true));
    const Json::Value& role = roles[group];
    if (!role.isString()) return invalid("scim_group_roles values must be role names");
    MembershipFields probe;
    probe.roles = {role.asString()};
    PORTCULLIS_RETURN_IF_ERROR(check_membership_fields(probe));
  }
  return Status::ok();
}

Status check_organization_id(std::string_view id) {
  bool ok = id.size() >= 5 && id.size() <= 32 && id.substr(0, 4) == "org_";
  for (size_t i = 4; ok && i < id.size(); ++i) {
    char c = id[i];
    ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c == '-';
  }
  if (ok) return Status::ok();
  return invalid("organization_id must be \"org_\" followed by 1 to 28 letters, digits, _ or -");
}

Result<Organization> OrganizationStore::create(const OrganizationFields& fields) {
  if (!fields.display_name) return invalid("display_name is required");
  Organization o;
  apply(o, fields);
  PORTCULLIS_RETURN_IF_ERROR(validate(o));
  o.id = new_id("org_");
  std::string now = db_now();
  o.create_time = o.update_time = db_time_to_rfc3339(now);
  auto inserted = db_.execute(
      "INSERT INTO organizations (id, display_name, external_id, metadata, create_time, "
      "update_time, scim_group_roles, login_methods) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      {o.id, o.display_name, store::nullable(o.external_id), json::write(o.metadata), now, now,
       json::write(o.scim_group_roles), stored_login_methods(o)});
  if (!inserted) return duplicate_external_id(inserted.status());
  return o;
}

Result<Organization> OrganizationStore::get(const std::string& id) {
  PORTCULLIS_RETURN_IF_ERROR(check_organization_id(id));
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kColumns + " FROM organizations WHERE id = ?", {id}));
  if (rows.empty()) return Status::not_found("no organization " + id);
  return from_row(rows[0]);
}

Result<Organization> OrganizationStore::update(const std::string& id,
                                               const OrganizationFields& changes) {
  PORTCULLIS_RETURN_IF_ERROR(check_organization_id(id));
  auto updated = store::update_row<Organization>(
      db_, std::string("SELECT ") + kColumns + " FROM organizations", id, "no organization " + id,
      from_row, [&](Organization& o) -> Status {
        apply(o, changes);
        PORTCULLIS_RETURN_IF_ERROR(validate(o));
        std::string now = db_now();
        o.update_time = db_time_to_rfc3339(now);
        return db_
            .execute(
                "UPDATE organizations SET display_name = ?, external_id = ?, metadata = ?, "
                "scim_group_roles = ?, login_methods = ?, update_time = ? WHERE id = ?",
                {o.display_name, store::nullable(o.external_id), json::write(o.metadata),
                 json::write(o.scim_group_roles), stored_login_methods(o), now, id})
            .status();
      });
  if (!updated) return duplicate_external_id(updated.status());
  return updated;
}

Status OrganizationStore::remove(const std::string& id) {
  PORTCULLIS_RETURN_IF_ERROR(check_organization_id(id));
  return db_.transaction([&]() -> Status {
    // The row lock orders this delete after any membership change in flight (they read the
    // organization with a shared lock), so no membership outlives its organization.
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows rows, db_.query("SELECT id FROM organizations WHERE id = ? FOR UPDATE", {id}));
    if (rows.empty()) return Status::not_found("no organization " + id);
    PORTCULLIS_RETURN_IF_ERROR(MembershipStore(db_).remove_all_of_organization(id));
    // Every token issued through the organization (org_id) ends with it.
    PORTCULLIS_RETURN_IF_ERROR(oauth::revoke_all_grants(db_, oauth::GrantsOf::kOrganization, id,
                                                        "organization_deleted", unix_now()));
    PORTCULLIS_RETURN_IF_ERROR(paging::drop_count(db_, id));
    PORTCULLIS_RETURN_IF_ERROR(domains::DomainStore(db_).remove_all_of_organization(id));
    return db_.execute("DELETE FROM organizations WHERE id = ?", {id}).status();
  });
}

Result<paging::Page<Organization>> OrganizationStore::list(const paging::PageRequest& request,
                                                           const paging::TokenCodec& codec) {
  return paging::fetch_page_as<Organization>(
      db_, paging::KeysetQuery{.columns = kColumns, .from = "organizations"}, request, codec,
      from_row);
}

}  // namespace portcullis::organizations
