#include "organizations/membership_store.h"

#include <set>

#include "core/ids.h"
#include "core/time.h"
#include "format/json.h"
#include "format/metadata.h"
#include "organizations/organization_store.h"
#include "paging/counter.h"
#include "tokens/grant_revocation.h"

namespace portcullis::organizations {
namespace {

bool is_role_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxRoleNameChars) return false;
  auto alnum = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  if (!alnum(name.front())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '_' && c != '.' && c != ':' && c != '-') return false;
  }
  return true;
}

std::string roles_json(const std::vector<std::string>& roles) {
  Json::Value a(Json::arrayValue);
  for (const auto& r : roles) {
    Json::Value o(Json::objectValue);
    o["name"] = r;
    a.append(o);
  }
  return json::write(a);
}

std::vector<std::string> roles_from_json(const std::string& text) {
  std::vector<std::string> out;
  auto parsed = json::parse(text);
  if (!parsed || !parsed->isArray()) return out;
  for (const auto& r : *parsed) {
    if (r.isObject() && r["name"].isString()) out.push_back(r["name"].asString());
  }
  return out;
}

}  // namespace

Status check_membership_fields(const MembershipFields& f) {
  if (f.roles.size() > kMaxRoles) {
    return Status::invalid_argument("a membership has at most " + std::to_string(kMaxRoles) +
                                    " roles");
  }
  std::set<std::string> seen;
  for (const auto& r : f.roles) {
    if (!is_role_name(r)) {
      return Status::invalid_argument(
          "a role name is 1 to 64 letters, digits and _ . : - starting with a letter or digit");
    }
    if (!seen.insert(r).second) return Status::invalid_argument("role " + r + " is listed twice");
  }
  if (f.status != "active" && f.status != "inactive" && f.status != "pending") {
    return Status::invalid_argument("status must be active, inactive or pending");
  }
  return format::check_metadata(f.metadata);
}

std::string membership_columns(std::string_view alias) {
  std::string a(alias);
  return a + ".organization_id, " + a + ".user_id, " + a + ".roles, " + a + ".metadata, " + a +
         ".status, " + a + ".provisioned_by, " + a + ".join_time, " + a + ".update_time";
}

Membership membership_from_row(const store::Row& r, size_t first) {
  Membership m;
  m.organization_id = r.str(first);
  m.user_id = r.str(first + 1);
  m.roles = roles_from_json(r.str(first + 2));
  m.metadata = format::parse_stored_metadata(r.str(first + 3));
  m.status = r.str(first + 4);
  m.provisioned_by = r.str(first + 5);
  m.join_time = db_time_to_rfc3339(r.str(first + 6));
  m.update_time = db_time_to_rfc3339(r.str(first + 7));
  return m;
}

Result<MembershipStore::Put> MembershipStore::put(const std::string& organization_id,
                                                  const std::string& user_id,
                                                  const MembershipFields& fields,
                                                  std::string_view provisioned_by) {
  PORTCULLIS_RETURN_IF_ERROR(check_organization_id(organization_id));
  if (!is_valid_id(user_id, "usr_")) return Status::not_found("no user " + user_id);
  PORTCULLIS_RETURN_IF_ERROR(check_membership_fields(fields));
  Put out;
  Status st = db_.transaction([&]() -> Status {
    out = Put{};
    // Shared locks: the organization and the user cannot be deleted before this commits, and
    // their deletes, which take these rows exclusively first, see this membership.
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows org, db_.query("SELECT id FROM organizations WHERE id = ? LOCK IN SHARE MODE",
                                   {organization_id}));
    if (org.empty()) return Status::not_found("no organization " + organization_id);
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows user,
        db_.query("SELECT create_time FROM users WHERE id = ? LOCK IN SHARE MODE", {user_id}));
    if (user.empty()) return Status::not_found("no user " + user_id);
    std::string now = db_now();
    std::string select = "SELECT " + membership_columns("m") +
                         " FROM memberships m WHERE m.organization_id = ? AND m.user_id = ? "
                         "FOR UPDATE";
    PORTCULLIS_ASSIGN_OR_RETURN(store::Rows existing,
                                db_.query(select, {organization_id, user_id}));
    if (existing.empty()) {
      auto inserted = db_.execute(
          "INSERT INTO memberships (organization_id, user_id, user_create_time, roles, metadata, "
          "status, provisioned_by, join_time, update_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {organization_id, user_id, user[0].str(0), roles_json(fields.roles),
           json::write(fields.metadata), fields.status, std::string(provisioned_by), now, now});
      if (inserted.is_ok()) {
        PORTCULLIS_RETURN_IF_ERROR(paging::add_to_count(db_, organization_id, user_id, 1));
        out.created = true;
        out.membership.provisioned_by = std::string(provisioned_by);
        out.membership.join_time = db_time_to_rfc3339(now);
      } else if (inserted.status().code() == Code::kAlreadyExists) {
        // A concurrent PUT created it first (and has committed: the insert waited for it).
        PORTCULLIS_ASSIGN_OR_RETURN(existing, db_.query(select, {organization_id, user_id}));
        if (existing.empty()) return Status::unavailable("concurrent change; try again");
      } else {
        return inserted.status();
      }
    }
    if (!existing.empty()) {
      out.membership = membership_from_row(existing[0], 0);
      PORTCULLIS_RETURN_IF_ERROR(
          db_.execute("UPDATE memberships SET roles = ?, metadata = ?, status = ?, update_time = ? "
                      "WHERE organization_id = ? AND user_id = ?",
                      {roles_json(fields.roles), json::write(fields.metadata), fields.status, now,
                       organization_id, user_id})
              .status());
      // Tokens the user holds through this organization (org_id) end when the membership stops
      // being active, as they do when it is removed.
      if (out.membership.status == "active" && fields.status != "active") {
        PORTCULLIS_RETURN_IF_ERROR(oauth::revoke_grants_of_membership(
            db_, organization_id, user_id, "membership_deactivated", unix_now()));
      }
    }
    out.membership.organization_id = organization_id;
    out.membership.user_id = user_id;
    out.membership.roles = fields.roles;
    out.membership.metadata = fields.metadata;
    out.membership.status = fields.status;
    out.membership.update_time = db_time_to_rfc3339(now);
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return out;
}

Status MembershipStore::remove(const std::string& organization_id, const std::string& user_id) {
  PORTCULLIS_RETURN_IF_ERROR(check_organization_id(organization_id));
  auto not_found = [&] {
    return Status::not_found("user " + user_id + " is not a member of " + organization_id);
  };
  if (!is_valid_id(user_id, "usr_")) return not_found();
  return db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(
        uint64_t deleted,
        db_.execute("DELETE FROM memberships WHERE organization_id = ? AND user_id = ?",
                    {organization_id, user_id}));
    if (deleted == 0) return not_found();
    // Tokens the user holds through this organization (org_id) end with the membership.
    PORTCULLIS_RETURN_IF_ERROR(oauth::revoke_grants_of_membership(
        db_, organization_id, user_id, "membership_removed", unix_now()));
    return paging::add_to_count(db_, organization_id, user_id, -1);
  });
}

Status MembershipStore::remove_all_of_user(const std::string& user_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows orgs,
      db_.query("SELECT organization_id FROM memberships WHERE user_id = ? FOR UPDATE", {user_id}));
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("DELETE FROM memberships WHERE user_id = ?", {user_id}).status());
  for (const store::Row& r : orgs) {
    PORTCULLIS_RETURN_IF_ERROR(paging::add_to_count(db_, r.str(0), user_id, -1));
  }
  return Status::ok();
}

Status MembershipStore::remove_all_of_organization(const std::string& organization_id) {
  return db_.execute("DELETE FROM memberships WHERE organization_id = ?", {organization_id})
      .status();
}

Result<std::optional<std::string>> MembershipStore::status_of(const std::string& organization_id,
                                                              const std::string& user_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(auto of_user, of_users({user_id}));
  for (const Membership& m : of_user[user_id]) {
    if (m.organization_id == organization_id) return std::optional<std::string>(m.status);
  }
  return std::optional<std::string>();
}

Result<std::map<std::string, std::vector<Membership>>> MembershipStore::of_users(
    const std::vector<std::string>& user_ids) {
  std::map<std::string, std::vector<Membership>> out;
  if (user_ids.empty()) return out;
  store::Params params(user_ids.begin(), user_ids.end());
  const std::string list = store::in_list(params, user_ids.size());
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT " + membership_columns("m") + " FROM memberships m WHERE m.user_id IN (" +
                    list + ") ORDER BY m.user_id, m.join_time, m.organization_id",
                params));
  for (const store::Row& r : rows) {
    Membership m = membership_from_row(r, 0);
    out[m.user_id].push_back(std::move(m));
  }
  return out;
}

}  // namespace portcullis::organizations
