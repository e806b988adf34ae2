#include "scim/scim_store.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/ids.h"
#include "core/time.h"
#include "crypto/hash.h"
#include "format/json.h"
#include "format/json_strings.h"
#include "identity/email_address.h"
#include "identity/session_store.h"
#include "identity/user_store.h"
#include "organizations/membership_store.h"
#include "paging/counter.h"
#include "scim/directory_store.h"
#include "tokens/grant_revocation.h"

namespace portcullis::scim {
namespace {

// Members, users and groups are read and written this many at a time: a power of two, the
// shape a full batch's statement has (store::in_list, store::insert_rows).
constexpr size_t kBatch = 512;

Status uniqueness(std::string detail) {
  return Status::already_exists(std::move(detail)).with_reason("uniqueness");
}

Status version_mismatch() {
  return Status::failed_precondition("the resource has changed (If-Match does not match)")
      .with_reason("versionMismatch");
}

Status check_if_match(const std::optional<std::string>& if_match, int64_t version) {
  if (!if_match || *if_match == "*") return Status::ok();
  // A list of entity tags (RFC 9110 §13.1.1); weak comparison.
  std::string current = etag(version);
  std::string bare = current.substr(2);
  size_t start = 0;
  const std::string& h = *if_match;
  while (start < h.size()) {
    size_t comma = h.find(',', start);
    if (comma == std::string::npos) comma = h.size();
    std::string tag = h.substr(start, comma - start);
    while (!tag.empty() && tag.front() == ' ') tag.erase(tag.begin());
    while (!tag.empty() && tag.back() == ' ') tag.pop_back();
    if (tag == current || tag == bare) return Status::ok();
    start = comma + 1;
  }
  return version_mismatch();
}

const char* kUserColumns =
    "u.user_id, u.organization_id, u.directory_id, u.attributes, u.active, u.version, "
    "u.create_time, u.update_time";

ScimUser user_from_row(const store::Row& r) {
  ScimUser u;
  u.id = r.str(0);
  u.organization_id = r.str(1);
  u.directory_id = r.str(2);
  auto parsed = json::parse(r.str(3));
  u.attributes = parsed ? *parsed : Json::Value(Json::objectValue);
  u.active = r.boolean(4);
  u.version = r.i64(5);
  u.create_time = db_time_to_rfc3339(r.str(6));
  u.update_time = db_time_to_rfc3339(r.str(7));
  return u;
}

// The user's groups as one column, `{"grp_…": [displayName, create_time], …}`, so a read of
// users costs no second round trip; groups_of_column puts them in the groups' order. Not
// JSON_ARRAYAGG(… ORDER BY …): MariaDB sets every GROUP_CONCAT-like aggregate up on a temporary
// table, on disk (Aria) for elements this long, made at each statement, and 10.11 crashes
// (signal 11 in ha_maria::drop_table) when making one fails under load; JSON_OBJECTAGG appends
// to a string and is cut neither at group_concat_max_len nor at max_allowed_packet (a 4 MB value
// came back whole from a server at 1 MiB; the client library takes rows up to 1 GiB), so a long
// value parses or goes to load_groups, never lists a user without groups. NULL without groups.
const char* kUserGroupsColumn =
    "(SELECT JSON_OBJECTAGG(g.id, JSON_ARRAY(g.display_name, g.create_time)) FROM "
    "scim_group_members m JOIN scim_groups g ON g.organization_id = m.organization_id AND g.id = "
    "m.group_id WHERE m.organization_id = u.organization_id AND m.user_id = u.user_id)";

// The groups of a kUserGroupsColumn value in the groups' order (creation time, then id, as
// load_groups reads them; a DATETIME(6) as text sorts as its time), or nullopt when it does not
// parse within json::parse's bounds (a user in thousands of groups): load_groups reads those.
std::optional<std::vector<std::pair<std::string, std::string>>> groups_of_column(
    const std::string& value) {
  const auto parsed = json::parse(value);
  if (!parsed || !parsed->isObject()) return std::nullopt;
  struct Listed {
    std::string create_time, id, display_name;
  };
  std::vector<Listed> listed;
  for (const auto& id : parsed->getMemberNames()) {
    const Json::Value& g = (*parsed)[id];
    if (g.isArray() && g.size() == 2 && g[0].isString() && g[1].isString()) {
      listed.push_back({g[1].asString(), id, g[0].asString()});
    }
  }
  std::sort(listed.begin(), listed.end(), [](const Listed& a, const Listed& b) {
    return std::tie(a.create_time, a.id) < std::tie(b.create_time, b.id);
  });
  std::vector<std::pair<std::string, std::string>> groups;
  groups.reserve(listed.size());
  for (auto& g : listed) groups.emplace_back(std::move(g.id), std::move(g.display_name));
  return groups;
}

const char* kGroupColumns =
    "g.id, g.organization_id, g.directory_id, g.display_name, g.external_id, g.version, "
    "g.create_time, g.update_time";

ScimGroup group_from_row(const store::Row& r) {
  ScimGroup g;
  g.id = r.str(0);
  g.organization_id = r.str(1);
  g.directory_id = r.str(2);
  g.display_name = r.str(3);
  g.external_id = r.opt(4);
  g.version = r.i64(5);
  g.create_time = db_time_to_rfc3339(r.str(6));
  g.update_time = db_time_to_rfc3339(r.str(7));
  return g;
}

std::optional<std::string> optional_string(const Json::Value& v) {
  if (v.isString() && !v.asString().empty()) return v.asString();
  return std::nullopt;
}

// The address a SCIM user is known by: the primary e-mail, else the work one, else the first,
// else a userName that is an address.
std::optional<std::string> email_of(const Json::Value& a) {
  const Json::Value& emails = a["emails"];
  std::optional<std::string> chosen;
  if (emails.isArray()) {
    for (const auto& e : emails) {
      if (e["primary"].isBool() && e["primary"].asBool()) return optional_string(e["value"]);
    }
    for (const auto& e : emails) {
      if (e["type"].isString() && e["type"].asString() == "work")
        return optional_string(e["value"]);
    }
    if (!emails.empty()) chosen = optional_string(emails[0]["value"]);
  }
  if (!chosen && a["userName"].isString() &&
      a["userName"].asString().find('@') != std::string::npos) {
    chosen = a["userName"].asString();
  }
  return chosen;
}

// The environment user's profile fields from SCIM attributes (best effort: values the
// environment user cannot hold are left out rather than failing provisioning).
identity::UserFields profile_of(const Json::Value& a, bool active) {
  identity::UserFields f;
  auto fit = [](const Json::Value& v, size_t max) -> std::optional<std::string> {
    if (!v.isString() || v.asString().empty() || v.asString().size() > max) return std::nullopt;
    return v.asString();
  };
  f.given_name = fit(a["name"]["givenName"], identity::kMaxNameChars);
  f.family_name = fit(a["name"]["familyName"], identity::kMaxNameChars);
  f.display_name = fit(a["displayName"], identity::kMaxDisplayNameChars);
  f.active = active;
  return f;
}

// The names of the top-level attributes that differ between two versions of a user.
std::vector<std::string> changed_fields(const Json::Value& before, const Json::Value& after) {
  std::set<std::string> names;
  for (const auto& n : before.getMemberNames()) {
    if (!after.isMember(n) || after[n] != before[n]) names.insert(n);
  }
  for (const auto& n : after.getMemberNames()) {
    if (!before.isMember(n)) names.insert(n);
  }
  return {names.begin(), names.end()};
}

bool active_of(const Json::Value& a) {
  return !a.isMember("active") || !a["active"].isBool() || a["active"].asBool();
}

// lib/paging/counter.h scopes: the organization's SCIM users, and its SCIM writes (a number
// that only grows: the generation of the list marks).
std::string users_scope(const std::string& organization_id) {
  return "scim_users:" + organization_id;
}
std::string writes_scope(const std::string& organization_id) {
  return "scim_writes:" + organization_id;
}

// The identity of a list query in scim_list_marks: its filter's SQL and values, and its order.
std::string query_key(const ListQuery& q) {
  std::string text = "users\n";
  if (!q.sort_expression.empty()) {
    text += "sort " + q.sort_expression + (q.descending ? " desc\n" : " asc\n");
  }
  if (q.filter) {
    text += q.filter->sql;
    for (const auto& p : q.filter->params) {
      text += '\n';
      if (const auto* s = std::get_if<std::string>(&p)) {
        text += "s" + std::to_string(s->size()) + ":" + *s;
      } else if (const auto* i = std::get_if<int64_t>(&p)) {
        text += "i" + std::to_string(*i);
      } else if (const auto* b = std::get_if<bool>(&p)) {
        text += *b ? "t" : "f";
      } else {
        text += "n";
      }
    }
  }
  return crypto::sha256(text);
}

}  // namespace

Result<std::map<std::string, std::vector<UserGroup>>> groups_of_users(
    store::Db& db, const std::vector<std::string>& user_ids) {
  std::map<std::string, std::vector<UserGroup>> out;
  for (size_t start = 0; start < user_ids.size(); start += kBatch) {
    size_t n = std::min(kBatch, user_ids.size() - start);
    store::Params params(user_ids.begin() + start, user_ids.begin() + start + n);
    const std::string list = store::in_list(params, n);
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows rows, db.query("SELECT m.user_id, m.organization_id, g.id, g.display_name FROM "
                                   "scim_group_members m JOIN scim_groups g ON g.organization_id = "
                                   "m.organization_id AND g.id = m.group_id WHERE m.user_id IN (" +
                                       list + ") ORDER BY g.create_time, g.id",
                                   params));
    for (const auto& r : rows) out[r.str(0)].push_back(UserGroup{r.str(1), r.str(2), r.str(3)});
  }
  return out;
}

Result<std::optional<ExternalIdMatch>> find_by_external_id(store::Db& db,
                                                           const std::string& organization_id,
                                                           const std::string& external_id) {
  if (external_id.empty() || external_id.size() > 255) return std::optional<ExternalIdMatch>();
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db.query("SELECT user_id, active FROM scim_users WHERE organization_id = ? AND "
               "external_id = ? LIMIT 2",
               {organization_id, external_id}));
  if (rows.size() != 1) return std::optional<ExternalIdMatch>();
  return std::optional<ExternalIdMatch>(ExternalIdMatch{rows[0].str(0), rows[0].boolean(1)});
}

std::string etag(int64_t version) {
  return "W/\"" + std::to_string(version) + "\"";
}

Status ScimStore::set_membership_status(const std::string& user_id, bool active) {
  organizations::MembershipFields fields;
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT roles, metadata FROM memberships WHERE organization_id = ? AND user_id = ?",
                {organization_id_, user_id}));
  if (!rows.empty()) {
    // Keep what the organization set; only the status follows the directory.
    auto roles = json::parse(rows[0].str(0));
    if (roles && roles->isArray()) {
      for (const auto& r : *roles) {
        if (r["name"].isString()) fields.roles.push_back(r["name"].asString());
      }
    }
    auto metadata = json::parse(rows[0].str(1));
    if (metadata && metadata->isObject()) fields.metadata = *metadata;
  }
  fields.status = active ? "active" : "inactive";
  return organizations::MembershipStore(db_)
      .put(organization_id_, user_id, fields, "scim")
      .status();
}

Result<std::vector<std::string>> ScimStore::member_ids(const std::string& group_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT user_id FROM scim_group_members WHERE organization_id = ? AND group_id = ?",
                {organization_id_, group_id}));
  std::vector<std::string> ids;
  for (const auto& r : rows) ids.push_back(r.str(0));
  return ids;
}

Status ScimStore::apply_group_roles(const std::vector<std::string>& user_ids,
                                    const std::set<std::string>& also_managed) {
  if (user_ids.empty()) return Status::ok();
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows org,
      db_.query("SELECT scim_group_roles FROM organizations WHERE id = ?", {organization_id_}));
  if (org.empty() || org[0].is_null(0)) return Status::ok();
  auto mapping = json::parse(org[0].str(0));
  if (!mapping || !mapping->isObject()) return Status::ok();
  if (mapping->empty() && also_managed.empty()) return Status::ok();
  std::map<std::string, std::string> role_of;  // LOWER(displayName) → role
  std::set<std::string> managed = also_managed;
  for (const auto& group : mapping->getMemberNames()) {
    PORTCULLIS_ASSIGN_OR_RETURN(store::Rows lowered, db_.query("SELECT LOWER(?)", {group}));
    role_of[lowered[0].str(0)] = (*mapping)[group].asString();
    managed.insert((*mapping)[group].asString());
  }
  for (const auto& user_id : user_ids) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows groups,
        db_.query("SELECT g.display_name_key FROM scim_group_members m JOIN scim_groups g ON "
                  "g.organization_id = m.organization_id AND g.id = m.group_id "
                  "WHERE m.organization_id = ? AND m.user_id = ?",
                  {organization_id_, user_id}));
    std::set<std::string> wanted;
    for (const auto& g : groups) {
      auto it = role_of.find(g.str(0));
      if (it != role_of.end()) wanted.insert(it->second);
    }
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows rows,
        db_.query("SELECT roles, metadata, status FROM memberships WHERE organization_id = ? AND "
                  "user_id = ? FOR UPDATE",
                  {organization_id_, user_id}));
    if (rows.empty()) continue;
    organizations::MembershipFields fields;
    std::vector<std::string> before;
    auto roles = json::parse(rows[0].str(0));
    if (roles && roles->isArray()) {
      for (const auto& r : *roles) {
        if (r["name"].isString()) before.push_back(r["name"].asString());
      }
    }
    for (const auto& r : before) {
      if (!managed.count(r)) fields.roles.push_back(r);
    }
    for (const auto& r : wanted) fields.roles.push_back(r);
    if (fields.roles == before) continue;
    auto metadata = json::parse(rows[0].str(1));
    if (metadata && metadata->isObject()) fields.metadata = *metadata;
    fields.status = rows[0].str(2);
    PORTCULLIS_RETURN_IF_ERROR(organizations::MembershipStore(db_)
                                   .put(organization_id_, user_id, fields, "scim")
                                   .status());
  }
  return Status::ok();
}

Result<Json::Value> lock_group_roles(store::Db& db, const std::string& organization_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows org,
      db.query("SELECT scim_group_roles FROM organizations WHERE id = ? FOR UPDATE",
               {organization_id}));
  if (org.empty()) return Status::not_found("no organization " + organization_id);
  if (org[0].is_null(0)) return Json::Value(Json::objectValue);
  auto parsed = json::parse(org[0].str(0));
  if (!parsed || !parsed->isObject()) return Json::Value(Json::objectValue);
  return *parsed;
}

namespace {

// The organization's scim_group_roles as stored (an empty object when unset); NotFound when
// the organization is gone.
Result<Json::Value> group_roles_of(store::Db& db, const std::string& organization_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows org,
      db.query("SELECT scim_group_roles FROM organizations WHERE id = ?", {organization_id}));
  if (org.empty()) return Status::not_found("no organization " + organization_id);
  if (!org[0].is_null(0)) {
    auto parsed = json::parse(org[0].str(0));
    if (parsed && parsed->isObject()) return *parsed;
  }
  return Json::Value(Json::objectValue);
}

std::string json_array(const std::set<std::string>& values) {
  Json::Value out(Json::arrayValue);
  for (const auto& v : values) out.append(v);
  return json::write(out);
}

// Up to `limit` distinct members (user id order, after `after`) of the organization's groups
// whose displayName is one of `names` (case-insensitively).
Result<std::vector<std::string>> mapped_members(store::Db& db, const std::string& organization_id,
                                                const std::set<std::string>& names,
                                                const std::string& after, size_t limit) {
  std::vector<std::string> ids;
  if (names.empty()) return ids;
  store::Params params{organization_id, after};
  std::string in;
  for (const auto& n : names) {
    in += in.empty() ? "LOWER(?)" : ", LOWER(?)";
    params.push_back(n);
  }
  params.push_back(static_cast<int64_t>(limit));
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows members,
      db.query("SELECT DISTINCT m.user_id FROM scim_group_members m JOIN scim_groups g ON "
               "g.organization_id = m.organization_id AND g.id = m.group_id WHERE "
               "g.organization_id = ? AND m.user_id > ? AND g.display_name_key IN (" +
                   in + ") ORDER BY m.user_id LIMIT ?",
               params));
  for (const auto& r : members) ids.push_back(r.str(0));
  return ids;
}

}  // namespace

Status reapply_group_roles(store::Db& db, const std::string& organization_id,
                           const Json::Value& previous) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value current, group_roles_of(db, organization_id));
  // Every group either mapping names, and every role the previous mapping managed.
  std::set<std::string> previous_names, previous_roles;
  if (previous.isObject()) {
    for (const auto& name : previous.getMemberNames()) {
      previous_names.insert(name);
      if (previous[name].isString()) previous_roles.insert(previous[name].asString());
    }
  }
  std::set<std::string> names = previous_names;
  for (const auto& name : current.getMemberNames()) names.insert(name);
  if (names.empty()) return Status::ok();
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::vector<std::string> members,
      mapped_members(db, organization_id, names, "", kMaxRoleReevaluation + 1));
  if (members.size() <= kMaxRoleReevaluation) {
    return ScimStore(db, organization_id, "").apply_group_roles(members, previous_roles);
  }
  // Too many for this request: queue it, adding to what an earlier queued change left to do
  // (and starting over with the members, since the mapping changed again).
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows queued,
      db.query("SELECT previous_names, previous_roles FROM scim_role_jobs WHERE "
               "organization_id = ? FOR UPDATE",
               {organization_id}));
  if (!queued.empty()) {
    for (const auto& n : json::string_set(queued[0].str(0))) previous_names.insert(n);
    for (const auto& r : json::string_set(queued[0].str(1))) previous_roles.insert(r);
  }
  const std::string now = db_now();
  return db
      .execute(
          "INSERT INTO scim_role_jobs (organization_id, previous_names, previous_roles, "
          "after_user_id, create_time, update_time) VALUES (?, ?, ?, NULL, ?, ?) ON DUPLICATE "
          "KEY UPDATE previous_names = VALUES(previous_names), previous_roles = "
          "VALUES(previous_roles), after_user_id = NULL, update_time = VALUES(update_time)",
          {organization_id, json_array(previous_names), json_array(previous_roles), now, now})
      .status();
}

Result<bool> run_checkpoint_job(store::Db& db, int64_t checkpoint_every) {
  const int64_t every = std::max<int64_t>(2, checkpoint_every);
  // The scopes "scim_users:<organization>": after the prefix, before the prefix with its last
  // character's successor.
  const std::string prefix = users_scope("");
  std::string after_prefix = prefix;
  after_prefix.back() = static_cast<char>(after_prefix.back() + 1);
  // Every organization's user count is a sum over its counter shards (lib/paging/counter.h);
  // its last checkpoint is the top of (organization_id, position).
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows due,
      db.query("SELECT organization_id, last FROM (SELECT o.organization_id, o.n, (SELECT "
               "COALESCE(MAX(c.position), 0) FROM scim_list_checkpoints c WHERE "
               "c.organization_id = o.organization_id) AS last FROM (SELECT SUBSTRING(scope, ?) "
               "AS organization_id, SUM(n) AS n FROM listing_counts WHERE scope > ? AND scope < ? "
               "GROUP BY scope) o) d WHERE n >= last + ? LIMIT 1",
               {static_cast<int64_t>(prefix.size()) + 1, prefix, after_prefix, 2 * every}));
  if (due.empty()) return false;
  ScimStore store(db, due[0].str(0), "", every);
  const int64_t target = due[0].i64(1) + every;
  int64_t position = 0;
  PORTCULLIS_RETURN_IF_ERROR(db.transaction([&]() -> Status {
    position = 0;
    std::string from_time, from_id;
    return store.seek_checkpoint(target, position, from_time, from_id);
  }));
  // Short of the target: the count ran ahead of the rows (it should not); report no work, so
  // the caller waits instead of asking again at once.
  return position >= target;
}

Result<bool> run_role_job(store::Db& db) {
  bool worked = false;
  Status st = db.transaction([&]() -> Status {
    worked = false;
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows jobs,
        db.query("SELECT organization_id, previous_names, previous_roles, after_user_id FROM "
                 "scim_role_jobs ORDER BY update_time LIMIT 1 FOR UPDATE SKIP LOCKED",
                 {}));
    if (jobs.empty()) return Status::ok();
    worked = true;
    const std::string organization_id = jobs[0].str(0);
    auto done = [&] {
      return db.execute("DELETE FROM scim_role_jobs WHERE organization_id = ?", {organization_id})
          .status();
    };
    auto current = group_roles_of(db, organization_id);
    if (!current && current.status().code() == Code::kNotFound) return done();
    PORTCULLIS_RETURN_IF_ERROR(current.status());
    std::set<std::string> names = json::string_set(jobs[0].str(1));
    for (const auto& name : current->getMemberNames()) names.insert(name);
    PORTCULLIS_ASSIGN_OR_RETURN(
        std::vector<std::string> slice,
        mapped_members(db, organization_id, names, jobs[0].opt(3).value_or(""), kRoleJobSlice));
    PORTCULLIS_RETURN_IF_ERROR(ScimStore(db, organization_id, "")
                                   .apply_group_roles(slice, json::string_set(jobs[0].str(2))));
    if (slice.size() < kRoleJobSlice) return done();
    // The next slice later; other organizations' jobs take their turn first.
    return db
        .execute(
            "UPDATE scim_role_jobs SET after_user_id = ?, update_time = ? WHERE "
            "organization_id = ?",
            {slice.back(), db_now(), organization_id})
        .status();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  return worked;
}

Result<ScimUser> ScimStore::create_user(const Json::Value& attributes) {
  std::string user_id;
  const bool active = active_of(attributes);
  Status st = db_.transaction([&]() -> Status {
    identity::UserStore users(db_);
    bool created_user = false;
    std::optional<std::string> email;
    if (auto raw = email_of(attributes)) {
      auto normalized = identity::normalize_email(*raw);
      if (normalized) email = *normalized;
    }
    user_id.clear();
    if (email) {
      PORTCULLIS_ASSIGN_OR_RETURN(
          store::Rows found, db_.query("SELECT id, email FROM users WHERE email = ?", {*email}));
      if (!found.empty() && identity::email_key(found[0].str(1)) == identity::email_key(*email)) {
        // Link only through a domain the organization has verified (contract §9).
        std::string domain = ascii_lower(email->substr(email->rfind('@') + 1));
        PORTCULLIS_ASSIGN_OR_RETURN(
            store::Rows verified,
            db_.query("SELECT 1 FROM organization_domains WHERE organization_id = ? AND "
                      "verified_domain = ?",
                      {organization_id_, domain}));
        if (!verified.empty()) user_id = found[0].str(0);
      }
      if (user_id.empty() && found.empty()) {
        identity::UserFields f = profile_of(attributes, active);
        f.email = *email;
        f.email_verified = false;
        auto created = users.create(f);
        if (created) {
          user_id = created->id;
          created_user = true;
        } else if (created.status().code() != Code::kAlreadyExists) {
          return created.status();
        }
      }
    }
    if (user_id.empty()) {
      PORTCULLIS_ASSIGN_OR_RETURN(identity::User u,
                                  users.create_without_email(profile_of(attributes, active)));
      user_id = u.id;
      created_user = true;
    } else if (!active) {
      PORTCULLIS_RETURN_IF_ERROR(users.update(user_id, profile_of(attributes, active)).status());
    }
    std::string now = db_now();
    auto inserted = db_.execute(
        "INSERT INTO scim_users (organization_id, user_id, directory_id, user_name, "
        "user_name_key, external_id, active, attributes, version, create_time, update_time, "
        "created_user) VALUES (?, ?, ?, ?, LOWER(?), ?, ?, ?, 1, ?, ?, ?)",
        {organization_id_, user_id, directory_id_, attributes["userName"].asString(),
         attributes["userName"].asString(),
         store::nullable(optional_string(attributes["externalId"])), active,
         json::write(attributes), now, now, created_user});
    if (!inserted) {
      if (inserted.status().code() == Code::kAlreadyExists) {
        return uniqueness("a user with this userName already exists in this organization");
      }
      return inserted.status();
    }
    PORTCULLIS_RETURN_IF_ERROR(index_emails(user_id, attributes));
    // A user that sorts before a checkpoint (a create whose time is older than rows already
    // listed: a node's clock behind, a slow transaction) moves it, as a delete does.
    PORTCULLIS_RETURN_IF_ERROR(shift_checkpoints(now, user_id, 1));
    PORTCULLIS_RETURN_IF_ERROR(
        paging::add_to_count(db_, users_scope(organization_id_), user_id, 1));
    PORTCULLIS_RETURN_IF_ERROR(count_write(user_id));
    return set_membership_status(user_id, active);
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  return get_user(user_id);
}

Result<ScimUser> ScimStore::get_user(const std::string& id) {
  if (!is_valid_id(id, "usr_")) return Status::not_found("no user " + id);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kUserColumns + ", " + kUserGroupsColumn +
                    " FROM scim_users u WHERE u.organization_id = ? AND u.user_id = ?",
                {organization_id_, id}));
  if (rows.empty()) return Status::not_found("no user " + id);
  PORTCULLIS_ASSIGN_OR_RETURN(std::vector<ScimUser> users, users_from_rows(rows));
  return std::move(users[0]);
}

Result<std::vector<ScimUser>> ScimStore::users_from_rows(const store::Rows& rows) {
  std::vector<ScimUser> users;
  std::vector<ScimUser> unparsed;
  std::vector<size_t> unparsed_at;
  for (const auto& r : rows) {
    users.push_back(user_from_row(r));
    const std::optional<std::string> column = r.opt(8);
    if (!column) continue;
    if (auto groups = groups_of_column(*column)) {
      users.back().groups = std::move(*groups);
    } else {
      unparsed_at.push_back(users.size() - 1);
      unparsed.push_back(users.back());
    }
  }
  if (!unparsed.empty()) {
    PORTCULLIS_RETURN_IF_ERROR(load_groups(unparsed));
    for (size_t i = 0; i < unparsed.size(); ++i) users[unparsed_at[i]] = std::move(unparsed[i]);
  }
  return users;
}

Result<ScimUser> ScimStore::lock_user(const std::string& id) {
  if (!is_valid_id(id, "usr_")) return Status::not_found("no user " + id);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kUserColumns +
                    " FROM scim_users u WHERE u.organization_id = ? AND u.user_id = ? FOR UPDATE",
                {organization_id_, id}));
  if (rows.empty()) return Status::not_found("no user " + id);
  return user_from_row(rows[0]);
}

Result<UserChange> ScimStore::write_user(const ScimUser& before, Json::Value new_attributes) {
  // Read through a const reference: a non-const operator[] would add null members.
  const Json::Value& attributes = new_attributes;
  UserChange change;
  change.user = before;
  if (attributes == before.attributes) return change;  // a no-op keeps version and lastModified
  const bool active = active_of(attributes);
  std::string now = db_now();
  auto updated = db_.execute(
      "UPDATE scim_users SET user_name = ?, user_name_key = LOWER(?), external_id = ?, "
      "active = ?, attributes = ?, version = version + 1, update_time = ? "
      "WHERE organization_id = ? AND user_id = ?",
      {attributes["userName"].asString(), attributes["userName"].asString(),
       store::nullable(optional_string(attributes["externalId"])), active, json::write(attributes),
       now, organization_id_, before.id});
  if (!updated) {
    if (updated.status().code() == Code::kAlreadyExists) {
      return uniqueness("a user with this userName already exists in this organization");
    }
    return updated.status();
  }
  if (attributes["emails"] != before.attributes["emails"]) {
    PORTCULLIS_RETURN_IF_ERROR(index_emails(before.id, attributes));
  }
  PORTCULLIS_RETURN_IF_ERROR(count_write(before.id));
  identity::UserFields profile = profile_of(attributes, active);
  PORTCULLIS_RETURN_IF_ERROR(identity::UserStore(db_).update(before.id, profile).status());
  if (active != before.active) PORTCULLIS_RETURN_IF_ERROR(set_membership_status(before.id, active));
  change.changed = true;
  change.fields = changed_fields(before.attributes, attributes);
  change.deactivated = before.active && !active;
  change.reactivated = !before.active && active;
  return change;
}

Result<UserChange> ScimStore::replace_user(const std::string& id, const Json::Value& attributes,
                                           const std::optional<std::string>& if_match) {
  UserChange change;
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(ScimUser before, lock_user(id));
    PORTCULLIS_RETURN_IF_ERROR(check_if_match(if_match, before.version));
    PORTCULLIS_ASSIGN_OR_RETURN(change, write_user(before, attributes));
    return Status::ok();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  PORTCULLIS_ASSIGN_OR_RETURN(change.user, get_user(id));
  return change;
}

Result<UserChange> ScimStore::patch_user(const std::string& id,
                                         const std::vector<PatchOperation>& ops,
                                         const std::optional<std::string>& if_match) {
  UserChange change;
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(ScimUser before, lock_user(id));
    PORTCULLIS_RETURN_IF_ERROR(check_if_match(if_match, before.version));
    PORTCULLIS_ASSIGN_OR_RETURN(Json::Value after, scim::patch_user(before.attributes, id, ops));
    PORTCULLIS_ASSIGN_OR_RETURN(change, write_user(before, std::move(after)));
    return Status::ok();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  PORTCULLIS_ASSIGN_OR_RETURN(change.user, get_user(id));
  return change;
}

Result<ScimUser> ScimStore::delete_user(const std::string& id,
                                        const std::optional<std::string>& if_match) {
  ScimUser before;
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(before, lock_user(id));
    PORTCULLIS_RETURN_IF_ERROR(check_if_match(if_match, before.version));
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows created,
        db_.query("SELECT created_user, create_time FROM scim_users WHERE organization_id = ? "
                  "AND user_id = ?",
                  {organization_id_, id}));
    if (created.empty()) return Status::not_found("no user " + id);
    PORTCULLIS_RETURN_IF_ERROR(remove_user_record(id, created[0].str(1)));
    Status removed = organizations::MembershipStore(db_).remove(organization_id_, id);
    if (!removed.is_ok() && removed.code() != Code::kNotFound) return removed;
    return deprovision(id, created[0].boolean(0));
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  return before;
}

Status ScimStore::remove_user_record(const std::string& id, const std::string& create_time) {
  // The groups that listed the user change: their ETags move.
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("UPDATE scim_groups g JOIN scim_group_members m ON m.organization_id = "
                  "g.organization_id AND m.group_id = g.id SET g.version = g.version + 1, "
                  "g.update_time = ? WHERE m.organization_id = ? AND m.user_id = ?",
                  {db_now(), organization_id_, id})
          .status());
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("DELETE FROM scim_group_members WHERE organization_id = ? AND user_id = ?",
                  {organization_id_, id})
          .status());
  PORTCULLIS_RETURN_IF_ERROR(shift_checkpoints(create_time, id, -1));
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("DELETE FROM scim_users WHERE organization_id = ? AND user_id = ?",
                  {organization_id_, id})
          .status());
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("DELETE FROM scim_user_emails WHERE organization_id = ? AND user_id = ?",
                  {organization_id_, id})
          .status());
  PORTCULLIS_RETURN_IF_ERROR(paging::add_to_count(db_, users_scope(organization_id_), id, -1));
  return count_write(id);
}

Status ScimStore::forget_records(store::Db& db, const std::string& user_id,
                                 const std::string& organization_id) {
  return db.transaction([&]() -> Status {
    std::string sql =
        "SELECT organization_id, directory_id, create_time FROM scim_users WHERE user_id = ?";
    store::Params params{user_id};
    if (!organization_id.empty()) {
      sql += " AND organization_id = ?";
      params.push_back(organization_id);
    }
    PORTCULLIS_ASSIGN_OR_RETURN(store::Rows records, db.query(sql + " FOR UPDATE", params));
    for (const store::Row& r : records) {
      PORTCULLIS_RETURN_IF_ERROR(
          ScimStore(db, r.str(0), r.str(1)).remove_user_record(user_id, r.str(2)));
    }
    return Status::ok();
  });
}

Status forget_user(store::Db& db, const std::string& user_id) {
  return ScimStore::forget_records(db, user_id, "");
}

Status forget_membership(store::Db& db, const std::string& organization_id,
                         const std::string& user_id) {
  return ScimStore::forget_records(db, user_id, organization_id);
}

Status forget_organization(store::Db& db, const std::string& organization_id) {
  return db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(DirectoryStore(db).remove_all_of_organization(organization_id));
    for (const char* table : {"scim_group_members", "scim_groups", "scim_user_emails", "scim_users",
                              "scim_list_marks", "scim_list_checkpoints", "scim_role_jobs"}) {
      PORTCULLIS_RETURN_IF_ERROR(
          db.execute(std::string("DELETE FROM ") + table + " WHERE organization_id = ?",
                     {organization_id})
              .status());
    }
    PORTCULLIS_RETURN_IF_ERROR(paging::drop_count(db, users_scope(organization_id)));
    return paging::drop_count(db, writes_scope(organization_id));
  });
}

Status ScimStore::deprovision(const std::string& user_id, bool created_user) {
  if (created_user) {
    // The directory made this account: with no membership and no other directory's record
    // left, nothing else vouches for it, and it goes with every session and grant.
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows others,
        db_.query("SELECT (SELECT COUNT(*) FROM memberships WHERE user_id = ?) + "
                  "(SELECT COUNT(*) FROM scim_users WHERE user_id = ?)",
                  {user_id, user_id}));
    if (!others.empty() && others[0].i64(0) == 0) {
      Status removed = identity::UserStore(db_).remove(user_id);
      if (removed.is_ok() || removed.code() == Code::kNotFound) return Status::ok();
      return removed;
    }
  }
  // A linked account (or one that belongs elsewhere too) stays, but what it holds ends now, as
  // on deactivation: resource servers refuse its access tokens at the next deny-list sync.
  const int64_t now = unix_now();
  PORTCULLIS_RETURN_IF_ERROR(identity::SessionStore::revoke_all_for_user(db_, user_id, now));
  return oauth::revoke_all_grants(db_, oauth::GrantsOf::kUser, user_id, "scim_user_deleted", now);
}

Status ScimStore::index_emails(const std::string& user_id, const Json::Value& attributes) {
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("DELETE FROM scim_user_emails WHERE organization_id = ? AND user_id = ?",
                  {organization_id_, user_id})
          .status());
  const Json::Value& emails = attributes["emails"];
  if (!emails.isArray()) return Status::ok();
  std::vector<std::string> values;
  for (const auto& e : emails) {
    const Json::Value& v = e["value"];
    if (v.isString() && !v.asString().empty()) values.push_back(v.asString());
  }
  if (values.empty()) return Status::ok();
  return store::insert_rows(
      db_, "INSERT IGNORE INTO scim_user_emails (organization_id, value_key, user_id) VALUES ",
      "(?, LEFT(LOWER(?), 255), ?)", values.size(), [&](size_t i, store::Params& params) {
        params.insert(params.end(), {organization_id_, values[i], user_id});
      });
}

Status ScimStore::count_write(const std::string& row_id) {
  return paging::add_to_count(db_, writes_scope(organization_id_), row_id, 1);
}

Result<int64_t> ScimStore::write_generation() {
  return paging::read_count(db_, writes_scope(organization_id_));
}

Result<ListResult<ScimUser>> ScimStore::list_users(const ListQuery& q) {
  ListResult<ScimUser> out;
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, list_user_rows(q, out.total));
  PORTCULLIS_ASSIGN_OR_RETURN(out.items, users_from_rows(rows));
  return out;
}

Result<store::Rows> ScimStore::list_user_rows(const ListQuery& q, int64_t& total) {
  const int64_t count = std::min<int64_t>(q.count, kMaxResults);
  const bool sorted = !q.sort_expression.empty();
  std::string where = "u.organization_id = ?";
  store::Params params{organization_id_};
  if (q.filter) {
    where += " AND (" + q.filter->sql + ")";
    for (const auto& p : q.filter->params) params.push_back(p);
  }
  const std::string key = query_key(q);
  // The list's order: the sort value (MariaDB puts NULLs first ascending, last descending), then
  // creation. `s` is the sort value of each row (NULL for the creation order).
  const std::string s = sorted ? q.sort_expression : std::string("NULL");
  const std::string direction = q.descending ? " DESC" : "";
  // The page's statement: `skip` rows after the row keyed (from_value, from_time, from_id), or
  // from the list's start when from_id is empty. It skips on the list index alone (covering
  // when the filter is on indexed columns), then reads the page's rows.
  auto page = [&](const std::optional<std::string>& from_value, const std::string& from_time,
                  const std::string& from_id, int64_t skip) {
    store::Params p = params;
    std::string inner =
        "SELECT u.user_id, u.create_time, " + s + " AS s FROM scim_users u WHERE " + where;
    if (!from_id.empty()) {
      const std::string after_key = "(u.create_time > ? OR (u.create_time = ? AND u.user_id > ?))";
      if (!sorted) {
        inner += " AND " + after_key;
      } else if (!from_value) {
        // After a row without a value: ascending, the other NULLs after it and every value;
        // descending (NULLs last), only the other NULLs after it.
        inner += q.descending ? " AND (" + s + " IS NULL AND " + after_key + ")"
                              : " AND (" + s + " IS NOT NULL OR " + after_key + ")";
      } else {
        inner += " AND (" + s + (q.descending ? " < ?" : " > ?") +
                 (q.descending ? " OR " + s + " IS NULL" : std::string()) + " OR (" + s +
                 " = ? AND " + after_key + "))";
        p.push_back(*from_value);
        p.push_back(*from_value);
      }
      p.push_back(from_time);
      p.push_back(from_time);
      p.push_back(from_id);
    }
    const std::string inner_order = sorted
                                        ? " ORDER BY s" + direction + ", u.create_time, u.user_id"
                                        : std::string(" ORDER BY u.create_time, u.user_id");
    const std::string outer_order = sorted
                                        ? " ORDER BY k.s" + direction + ", k.create_time, k.user_id"
                                        : std::string(" ORDER BY k.create_time, k.user_id");
    p.push_back(count);
    p.push_back(skip);
    p.push_back(organization_id_);
    return db_.query(std::string("SELECT ") + kUserColumns + ", " + kUserGroupsColumn +
                         ", k.s FROM (" + inner + inner_order +
                         " LIMIT ? OFFSET ?) k JOIN scim_users u ON " +
                         "u.organization_id = ? AND u.user_id = k.user_id" + outer_order,
                     p);
  };
  // A lookup — Entra and Okta send `userName eq "…"` before every create — is one statement:
  // a filtered first page that is not full is the whole list, so its size is the total, and
  // neither a count, nor the marks, nor a transaction is needed. (A full page goes the long way.)
  if (q.filter && q.start_index == 1 && count > 0) {
    PORTCULLIS_ASSIGN_OR_RETURN(store::Rows first, page(std::nullopt, "", "", 0));
    if (static_cast<int64_t>(first.size()) < count) {
      total = static_cast<int64_t>(first.size());
      return first;
    }
  }
  store::Rows rows;
  // One transaction: the marks, checkpoints, counters and rows are read in one snapshot.
  Status st = db_.transaction([&]() -> Status {
    rows.clear();
    PORTCULLIS_ASSIGN_OR_RETURN(const int64_t generation, write_generation());
    // Where to start: after the row at `position` (its key: sort value, creation time, id).
    int64_t position = 0;
    std::optional<std::string> from_value;
    std::string from_time, from_id;
    bool have_total = false;
    // Served from a mark of an earlier generation, or one itself so served: `position` counts
    // the rows served before, not the list's current offset.
    bool inexact = false;
    if (q.start_index > 1) {
      // The page that follows one served before (Okta's import), in any generation: it goes on
      // after the row where that page ended, so a walk sees every row exactly once even while
      // the list changes (a walk asks for its next page within kWalkPauseSeconds; a page after an
      // older mark of an earlier generation is a jump). Otherwise the nearest exact mark of
      // this generation before the page.
      PORTCULLIS_ASSIGN_OR_RETURN(
          store::Rows marks,
          db_.query("SELECT position, total, row_time, row_id, sort_value, generation, exact "
                    "FROM scim_list_marks WHERE organization_id = ? AND query_key = ? AND "
                    "position = ? AND (generation = ? OR create_time >= NOW(6) - INTERVAL ? "
                    "SECOND) ORDER BY generation DESC LIMIT 1",
                    {organization_id_, key, q.start_index - 1, generation, kWalkPauseSeconds}));
      if (marks.empty()) {
        PORTCULLIS_ASSIGN_OR_RETURN(
            marks, db_.query("SELECT position, total, row_time, row_id, sort_value, generation, "
                             "exact FROM scim_list_marks WHERE organization_id = ? AND "
                             "query_key = ? AND generation = ? AND exact AND position <= ? "
                             "ORDER BY position DESC LIMIT 1",
                             {organization_id_, key, generation, q.start_index - 1}));
      }
      if (!marks.empty()) {
        position = marks[0].i64(0);
        from_time = marks[0].str(2);
        from_id = marks[0].str(3);
        from_value = marks[0].opt(4);
        inexact = marks[0].i64(5) != generation || !marks[0].boolean(6);
        if (marks[0].i64(5) == generation) {
          total = marks[0].i64(1);
          have_total = true;
        }
      }
    }
    if (!have_total) {
      if (q.filter) {
        PORTCULLIS_ASSIGN_OR_RETURN(
            store::Rows n, db_.query("SELECT COUNT(*) FROM scim_users u WHERE " + where, params));
        total = n.empty() ? 0 : n[0].i64(0);
      } else {
        PORTCULLIS_ASSIGN_OR_RETURN(total, paging::read_count(db_, users_scope(organization_id_)));
      }
    }
    // A walk goes on after its row even when the list has shrunk below startIndex meanwhile.
    if (count <= 0 || (!inexact && q.start_index > total)) return Status::ok();
    if (!q.filter && !sorted && !inexact && q.start_index - 1 - position >= checkpoint_every_) {
      PORTCULLIS_RETURN_IF_ERROR(seek_checkpoint(q.start_index - 1, position, from_time, from_id));
    }
    PORTCULLIS_ASSIGN_OR_RETURN(rows,
                                page(from_value, from_time, from_id, q.start_index - 1 - position));
    // Where this page ends, for the next one (not after the last page).
    const int64_t end = q.start_index - 1 + static_cast<int64_t>(rows.size());
    if (rows.empty() || (inexact ? static_cast<int64_t>(rows.size()) < count : end >= total)) {
      return Status::ok();
    }
    const store::Row& last = rows.back();
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute(
               "INSERT INTO scim_list_marks (organization_id, query_key, generation, position, "
               "total, row_time, row_id, sort_value, exact, create_time) VALUES (?, ?, ?, ?, ?, "
               "?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE total = VALUES(total), row_time = "
               "VALUES(row_time), row_id = VALUES(row_id), sort_value = VALUES(sort_value), "
               "exact = VALUES(exact), create_time = VALUES(create_time)",
               {organization_id_, key, generation, end, total, last.str(6), last.str(0),
                store::nullable(last.opt(9)), !inexact, db_now()})
            .status());
    if (q.start_index == 1) {
      // A new walk: forget the marks of this query from earlier generations.
      PORTCULLIS_RETURN_IF_ERROR(
          db_.execute("DELETE FROM scim_list_marks WHERE organization_id = ? AND query_key = ? "
                      "AND generation < ?",
                      {organization_id_, key, generation})
              .status());
    }
    return Status::ok();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  return rows;
}

Status ScimStore::seek_checkpoint(int64_t target, int64_t& position, std::string& from_time,
                                  std::string& from_id) {
  // Locking reads: the positions read here are the committed ones, and the rows counted stay
  // put until this transaction ends (a create or delete before them waits), so a checkpoint
  // written here is exact when it commits.
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows cp,
      db_.query("SELECT position, row_time, row_id FROM scim_list_checkpoints WHERE "
                "organization_id = ? AND position <= ? ORDER BY position DESC LIMIT 1 "
                "LOCK IN SHARE MODE",
                {organization_id_, target}));
  if (!cp.empty() && cp[0].i64(0) > position) {
    position = cp[0].i64(0);
    from_time = cp[0].str(1);
    from_id = cp[0].str(2);
  }
  // Hop checkpoint_every_ rows at a time on the list index, leaving a checkpoint at each hop.
  while (target - position >= checkpoint_every_) {
    store::Params p{organization_id_};
    std::string sql =
        "SELECT u.create_time, u.user_id FROM scim_users u WHERE u.organization_id = ?";
    if (!from_id.empty()) {
      sql += " AND (u.create_time > ? OR (u.create_time = ? AND u.user_id > ?))";
      p.push_back(from_time);
      p.push_back(from_time);
      p.push_back(from_id);
    }
    p.push_back(checkpoint_every_ - 1);
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows hop,
        db_.query(sql + " ORDER BY u.create_time, u.user_id LIMIT 1 OFFSET ? LOCK IN SHARE MODE",
                  p));
    if (hop.empty()) break;
    position += checkpoint_every_;
    from_time = hop[0].str(0);
    from_id = hop[0].str(1);
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("INSERT INTO scim_list_checkpoints (organization_id, row_time, row_id, "
                    "position) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE position = "
                    "VALUES(position)",
                    {organization_id_, from_time, from_id, position})
            .status());
  }
  return Status::ok();
}

Status ScimStore::shift_checkpoints(const std::string& row_time, const std::string& row_id,
                                    int64_t delta) {
  if (delta < 0) {
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("DELETE FROM scim_list_checkpoints WHERE organization_id = ? AND row_time = ? "
                    "AND row_id = ?",
                    {organization_id_, row_time, row_id})
            .status());
  }
  return db_
      .execute(
          "UPDATE scim_list_checkpoints SET position = position + ? WHERE organization_id = ? "
          "AND (row_time > ? OR (row_time = ? AND row_id > ?))",
          {delta, organization_id_, row_time, row_time, row_id})
      .status();
}

Result<store::Rows> ScimStore::list_rows(const ListQuery& q, const std::string& from,
                                         const std::string& alias, const std::string& columns,
                                         const std::string& id_column, int64_t& total) {
  std::string where = alias + ".organization_id = ?";
  store::Params params{organization_id_};
  if (q.filter) {
    where += " AND (" + q.filter->sql + ")";
    for (const auto& p : q.filter->params) params.push_back(p);
  }
  // Stable across pages (Okta's import): creation time, then id, after any sortBy.
  std::string order = alias + ".create_time, " + id_column;
  if (!q.sort_expression.empty()) {
    order = q.sort_expression + (q.descending ? " DESC, " : " ASC, ") + order;
  }
  const int64_t count = std::min<int64_t>(q.count, kMaxResults);
  auto page = [&]() {
    store::Params p = params;
    p.push_back(count);
    p.push_back(q.start_index - 1);
    return db_.query("SELECT " + columns + " FROM " + from + " WHERE " + where + " ORDER BY " +
                         order + " LIMIT ? OFFSET ?",
                     p);
  };
  // A first page that is not full is the whole list: its size is the total, no count needed
  // (Entra looks groups up by `displayName eq "…"`). A full one is kept for after the count.
  std::optional<store::Rows> first;
  if (q.start_index == 1 && count > 0) {
    PORTCULLIS_ASSIGN_OR_RETURN(first, page());
    if (static_cast<int64_t>(first->size()) < count) {
      total = static_cast<int64_t>(first->size());
      return std::move(*first);
    }
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows counted, db_.query("SELECT COUNT(*) FROM " + from + " WHERE " + where, params));
  total = counted.empty() ? 0 : counted[0].i64(0);
  if (first) return std::move(*first);
  if (count <= 0 || q.start_index > total) return store::Rows{};
  return page();
}

Status ScimStore::load_groups(std::vector<ScimUser>& users) {
  for (size_t start = 0; start < users.size(); start += kBatch) {
    size_t n = std::min(kBatch, users.size() - start);
    store::Params params{organization_id_};
    for (size_t i = 0; i < n; ++i) params.push_back(users[start + i].id);
    const std::string list = store::in_list(params, n);
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows rows,
        db_.query("SELECT m.user_id, g.id, g.display_name FROM scim_group_members m JOIN "
                  "scim_groups g ON g.organization_id = m.organization_id AND g.id = m.group_id "
                  "WHERE m.organization_id = ? AND m.user_id IN (" +
                      list + ") ORDER BY g.create_time, g.id",
                  params));
    for (const auto& r : rows) {
      for (size_t i = 0; i < n; ++i) {
        if (users[start + i].id == r.str(0))
          users[start + i].groups.emplace_back(r.str(1), r.str(2));
      }
    }
  }
  return Status::ok();
}

// Groups.

Status ScimStore::check_members(const std::vector<std::string>& user_ids) {
  for (size_t start = 0; start < user_ids.size(); start += kBatch) {
    size_t n = std::min(kBatch, user_ids.size() - start);
    store::Params params{organization_id_};
    for (size_t i = 0; i < n; ++i) {
      if (!is_valid_id(user_ids[start + i], "usr_")) {
        return invalid_value("member " + user_ids[start + i] + " is not a user of this directory");
      }
      params.push_back(user_ids[start + i]);
    }
    const std::string list = store::in_list(params, n);
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows rows,
        db_.query("SELECT COUNT(DISTINCT user_id) FROM scim_users WHERE organization_id = ? AND "
                  "user_id IN (" +
                      list + ")",
                  params));
    std::vector<std::string> distinct(user_ids.begin() + start, user_ids.begin() + start + n);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (rows.empty() || rows[0].i64(0) != static_cast<int64_t>(distinct.size())) {
      return invalid_value("a member is not a user of this directory");
    }
  }
  return Status::ok();
}

Status ScimStore::add_members(const std::string& group_id, const std::vector<std::string>& ids) {
  PORTCULLIS_RETURN_IF_ERROR(check_members(ids));
  for (size_t start = 0; start < ids.size(); start += kBatch) {
    size_t n = std::min(kBatch, ids.size() - start);
    PORTCULLIS_RETURN_IF_ERROR(store::insert_rows(
        db_, "INSERT IGNORE INTO scim_group_members (organization_id, group_id, user_id) VALUES ",
        "(?, ?, ?)", n, [&](size_t i, store::Params& params) {
          params.insert(params.end(), {organization_id_, group_id, ids[start + i]});
        }));
  }
  return Status::ok();
}

Status ScimStore::remove_members(const std::string& group_id, const std::vector<std::string>& ids) {
  for (size_t start = 0; start < ids.size(); start += kBatch) {
    size_t n = std::min(kBatch, ids.size() - start);
    store::Params params{organization_id_, group_id};
    for (size_t i = 0; i < n; ++i) params.push_back(ids[start + i]);
    const std::string list = store::in_list(params, n);
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("DELETE FROM scim_group_members WHERE organization_id = ? AND group_id = ? AND "
                    "user_id IN (" +
                        list + ")",
                    params)
            .status());
  }
  return Status::ok();
}

Result<ScimGroup> ScimStore::create_group(const GroupInput& input) {
  std::string id = new_id("grp_");
  Status st = db_.transaction([&]() -> Status {
    std::string now = db_now();
    auto inserted = db_.execute(
        "INSERT INTO scim_groups (organization_id, id, directory_id, display_name, "
        "display_name_key, external_id, version, create_time, update_time) "
        "VALUES (?, ?, ?, ?, LOWER(?), ?, 1, ?, ?)",
        {organization_id_, id, directory_id_, input.display_name, input.display_name,
         store::nullable(input.external_id), now, now});
    if (!inserted) {
      if (inserted.status().code() == Code::kAlreadyExists) {
        return uniqueness("a group with this displayName already exists in this organization");
      }
      return inserted.status();
    }
    PORTCULLIS_RETURN_IF_ERROR(add_members(id, input.member_ids));
    PORTCULLIS_RETURN_IF_ERROR(count_write(id));
    return apply_group_roles(input.member_ids);
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  return get_group(id, true);
}

Status ScimStore::load_members(ScimGroup& g) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT m.user_id, u.user_name FROM scim_group_members m JOIN scim_users u ON "
                "u.organization_id = m.organization_id AND u.user_id = m.user_id "
                "WHERE m.organization_id = ? AND m.group_id = ? ORDER BY m.user_id",
                {organization_id_, g.id}));
  g.members.clear();
  for (const auto& r : rows) g.members.emplace_back(r.str(0), r.str(1));
  g.members_loaded = true;
  return Status::ok();
}

Result<ScimGroup> ScimStore::get_group(const std::string& id, bool with_members) {
  if (!is_valid_id(id, "grp_")) return Status::not_found("no group " + id);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kGroupColumns +
                    " FROM scim_groups g WHERE g.organization_id = ? AND g.id = ?",
                {organization_id_, id}));
  if (rows.empty()) return Status::not_found("no group " + id);
  ScimGroup g = group_from_row(rows[0]);
  if (with_members) PORTCULLIS_RETURN_IF_ERROR(load_members(g));
  return g;
}

Result<ScimGroup> ScimStore::lock_group(const std::string& id) {
  if (!is_valid_id(id, "grp_")) return Status::not_found("no group " + id);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kGroupColumns +
                    " FROM scim_groups g WHERE g.organization_id = ? AND g.id = ? FOR UPDATE",
                {organization_id_, id}));
  if (rows.empty()) return Status::not_found("no group " + id);
  return group_from_row(rows[0]);
}

Result<GroupChange> ScimStore::replace_group(const std::string& id, const GroupInput& input,
                                             const std::optional<std::string>& if_match) {
  GroupPatch plan;
  plan.display_name = input.display_name;
  plan.external_id = input.external_id;
  plan.members.push_back({MemberChange::Kind::kClear, {}});
  plan.members.push_back({MemberChange::Kind::kAdd, input.member_ids});
  return patch_group(id, plan, if_match);
}

Result<GroupChange> ScimStore::patch_group(const std::string& id, const GroupPatch& plan,
                                           const std::optional<std::string>& if_match) {
  GroupChange change;
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(ScimGroup before, lock_group(id));
    PORTCULLIS_RETURN_IF_ERROR(check_if_match(if_match, before.version));
    bool changed = false;
    change.fields.clear();  // a retried transaction starts over
    std::set<std::string> affected;
    std::string name = plan.display_name.value_or(before.display_name);
    std::optional<std::string> external_id = plan.external_id.value_or(before.external_id);
    if (name != before.display_name || external_id != before.external_id) {
      auto updated = db_.execute(
          "UPDATE scim_groups SET display_name = ?, display_name_key = LOWER(?), external_id = ? "
          "WHERE organization_id = ? AND id = ?",
          {name, name, store::nullable(external_id), organization_id_, id});
      if (!updated) {
        if (updated.status().code() == Code::kAlreadyExists) {
          return uniqueness("a group with this displayName already exists in this organization");
        }
        return updated.status();
      }
      changed = true;
      if (name != before.display_name) change.fields.push_back("displayName");
      if (external_id != before.external_id) change.fields.push_back("externalId");
      if (name != before.display_name) {
        PORTCULLIS_ASSIGN_OR_RETURN(std::vector<std::string> all, member_ids(id));
        affected.insert(all.begin(), all.end());
      }
    }
    for (const auto& m : plan.members) {
      affected.insert(m.user_ids.begin(), m.user_ids.end());
      switch (m.kind) {
        case MemberChange::Kind::kAdd:
          if (m.user_ids.empty()) break;
          PORTCULLIS_RETURN_IF_ERROR(add_members(id, m.user_ids));
          changed = true;
          break;
        case MemberChange::Kind::kRemove:
          if (m.user_ids.empty()) break;
          PORTCULLIS_RETURN_IF_ERROR(remove_members(id, m.user_ids));
          changed = true;
          break;
        case MemberChange::Kind::kClear: {
          PORTCULLIS_ASSIGN_OR_RETURN(std::vector<std::string> all, member_ids(id));
          affected.insert(all.begin(), all.end());
          PORTCULLIS_RETURN_IF_ERROR(
              db_.execute(
                     "DELETE FROM scim_group_members WHERE organization_id = ? AND group_id = ?",
                     {organization_id_, id})
                  .status());
          changed = true;
          break;
        }
      }
    }
    PORTCULLIS_RETURN_IF_ERROR(apply_group_roles({affected.begin(), affected.end()}));
    if (std::any_of(plan.members.begin(), plan.members.end(), [](const MemberChange& m) {
          return m.kind == MemberChange::Kind::kClear || !m.user_ids.empty();
        })) {
      change.fields.push_back("members");
    }
    if (changed) {
      PORTCULLIS_RETURN_IF_ERROR(count_write(id));
      PORTCULLIS_RETURN_IF_ERROR(
          db_.execute("UPDATE scim_groups SET version = version + 1, update_time = ? WHERE "
                      "organization_id = ? AND id = ?",
                      {db_now(), organization_id_, id})
              .status());
    }
    change.changed = changed;
    return Status::ok();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  PORTCULLIS_ASSIGN_OR_RETURN(change.group, get_group(id, false));
  return change;
}

Result<ScimGroup> ScimStore::delete_group(const std::string& id,
                                          const std::optional<std::string>& if_match) {
  ScimGroup before;
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(before, lock_group(id));
    PORTCULLIS_RETURN_IF_ERROR(check_if_match(if_match, before.version));
    PORTCULLIS_ASSIGN_OR_RETURN(std::vector<std::string> members, member_ids(id));
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("DELETE FROM scim_group_members WHERE organization_id = ? AND group_id = ?",
                    {organization_id_, id})
            .status());
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("DELETE FROM scim_groups WHERE organization_id = ? AND id = ?",
                    {organization_id_, id})
            .status());
    PORTCULLIS_RETURN_IF_ERROR(count_write(id));
    return apply_group_roles(members);
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  return before;
}

Result<ListResult<ScimGroup>> ScimStore::list_groups(const ListQuery& q) {
  ListResult<ScimGroup> out;
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                              list_rows(q, "scim_groups g", "g", kGroupColumns, "g.id", out.total));
  for (const auto& r : rows) {
    out.items.push_back(group_from_row(r));
    if (q.with_members) PORTCULLIS_RETURN_IF_ERROR(load_members(out.items.back()));
  }
  return out;
}

}  // namespace portcullis::scim
