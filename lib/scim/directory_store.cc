#include "scim/directory_store.h"

#include "core/ids.h"
#include "core/time.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "format/text.h"
#include "organizations/organization_store.h"

namespace portcullis::scim {
namespace {

constexpr std::string_view kTokenPrefix = "scim_";

std::string columns() {
  return "d.id, d.organization_id, d.name, d.create_time, d.last_used_time, "
         "(SELECT COUNT(*) FROM scim_directory_tokens t WHERE t.directory_id = d.id AND "
         "t.revoked_time IS NULL)";
}

Directory from_row(const store::Row& r) {
  Directory d;
  d.id = r.str(0);
  d.organization_id = r.str(1);
  d.name = r.str(2);
  d.create_time = db_time_to_rfc3339(r.str(3));
  if (!r.is_null(4)) d.last_used_time = db_time_to_rfc3339(r.str(4));
  d.live_tokens = static_cast<int>(r.i64(5));
  return d;
}

}  // namespace

Result<IssuedToken> DirectoryStore::issue(const std::string& directory_id) {
  IssuedToken t;
  t.token = std::string(kTokenPrefix) + crypto::random_token(32);
  std::string now = db_now();
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("INSERT INTO scim_directory_tokens (token_hash, directory_id, create_time) "
                  "VALUES (?, ?, ?)",
                  {crypto::sha256(t.token), directory_id, now})
          .status());
  t.create_time = db_time_to_rfc3339(now);
  return t;
}

Result<std::pair<Directory, IssuedToken>> DirectoryStore::create(const std::string& organization_id,
                                                                 const std::string& name) {
  PORTCULLIS_RETURN_IF_ERROR(organizations::check_organization_id(organization_id));
  PORTCULLIS_RETURN_IF_ERROR(text::check_display_text(name, "name", kMaxDirectoryNameChars, true));
  std::string id = new_id("dir_");
  IssuedToken token;
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows org, db_.query("SELECT id FROM organizations WHERE id = ? LOCK IN SHARE MODE",
                                   {organization_id}));
    if (org.empty()) return Status::not_found("no organization " + organization_id);
    std::string now = db_now();
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("INSERT INTO scim_directories (id, organization_id, name, create_time, "
                    "update_time) VALUES (?, ?, ?, ?, ?)",
                    {id, organization_id, name, now, now})
            .status());
    PORTCULLIS_ASSIGN_OR_RETURN(token, issue(id));
    return Status::ok();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  PORTCULLIS_ASSIGN_OR_RETURN(Directory d, get(organization_id, id));
  return std::make_pair(std::move(d), std::move(token));
}

Result<Directory> DirectoryStore::get(const std::string& organization_id,
                                      const std::string& directory_id) {
  PORTCULLIS_RETURN_IF_ERROR(organizations::check_organization_id(organization_id));
  if (!is_valid_id(directory_id, "dir_")) return Status::not_found("no directory " + directory_id);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT " + columns() +
                    " FROM scim_directories d WHERE d.id = ? AND d.organization_id = ?",
                {directory_id, organization_id}));
  if (rows.empty()) return Status::not_found("no directory " + directory_id);
  return from_row(rows[0]);
}

Result<IssuedToken> DirectoryStore::rotate(const std::string& organization_id,
                                           const std::string& directory_id) {
  IssuedToken token;
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(organizations::check_organization_id(organization_id));
    if (!is_valid_id(directory_id, "dir_")) {
      return Status::not_found("no directory " + directory_id);
    }
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows dir,
        db_.query("SELECT id FROM scim_directories WHERE id = ? AND organization_id = ? FOR UPDATE",
                  {directory_id, organization_id}));
    if (dir.empty()) return Status::not_found("no directory " + directory_id);
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows live,
        db_.query("SELECT token_hash FROM scim_directory_tokens WHERE directory_id = ? AND "
                  "revoked_time IS NULL ORDER BY create_time DESC",
                  {directory_id}));
    std::string now = db_now();
    // Keep the newest kMaxLiveTokens - 1, so that with the new one at most kMaxLiveTokens live.
    for (size_t i = kMaxLiveTokens - 1; i < live.size(); ++i) {
      PORTCULLIS_RETURN_IF_ERROR(
          db_.execute("UPDATE scim_directory_tokens SET revoked_time = ? WHERE token_hash = ?",
                      {now, live[i].str(0)})
              .status());
    }
    PORTCULLIS_ASSIGN_OR_RETURN(token, issue(directory_id));
    return Status::ok();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  return token;
}

Status DirectoryStore::remove(const std::string& organization_id, const std::string& directory_id) {
  PORTCULLIS_RETURN_IF_ERROR(organizations::check_organization_id(organization_id));
  if (!is_valid_id(directory_id, "dir_")) return Status::not_found("no directory " + directory_id);
  return db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(
        uint64_t n, db_.execute("DELETE FROM scim_directories WHERE id = ? AND organization_id = ?",
                                {directory_id, organization_id}));
    if (n == 0) return Status::not_found("no directory " + directory_id);
    return db_.execute("DELETE FROM scim_directory_tokens WHERE directory_id = ?", {directory_id})
        .status();
  });
}

Status DirectoryStore::remove_all_of_organization(const std::string& organization_id) {
  return db_.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("DELETE t FROM scim_directory_tokens t JOIN scim_directories d ON "
                    "d.id = t.directory_id WHERE d.organization_id = ?",
                    {organization_id})
            .status());
    return db_.execute("DELETE FROM scim_directories WHERE organization_id = ?", {organization_id})
        .status();
  });
}

Result<paging::Page<Directory>> DirectoryStore::list(const std::string& organization_id,
                                                     const paging::PageRequest& request,
                                                     const paging::TokenCodec& codec) {
  PORTCULLIS_RETURN_IF_ERROR(organizations::check_organization_id(organization_id));
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows org, db_.query("SELECT id FROM organizations WHERE id = ?", {organization_id}));
  if (org.empty()) return Status::not_found("no organization " + organization_id);
  paging::KeysetQuery query{.columns = columns(),
                            .from = "scim_directories d",
                            .where = "d.organization_id = ?",
                            .params = {organization_id},
                            .time_column = "d.create_time",
                            .id_column = "d.id",
                            .total = {}};
  return paging::fetch_page_as<Directory>(
      db_, query, request, codec,
      [](const store::Row& r) -> Result<Directory> { return from_row(r); });
}

Result<DirectoryCaller> DirectoryStore::authenticate(std::string_view token) {
  const Status refused = Status::unauthenticated("the SCIM bearer token is not valid");
  if (token.size() < kTokenPrefix.size() || token.size() > 128 ||
      token.substr(0, kTokenPrefix.size()) != kTokenPrefix) {
    return refused;
  }
  const std::string digest = crypto::sha256(token);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT t.token_hash, d.id, d.organization_id, "
                "(d.last_used_time IS NULL OR d.last_used_time < NOW(6) - INTERVAL 60 SECOND) "
                "FROM scim_directory_tokens t JOIN scim_directories d ON d.id = t.directory_id "
                // A deleted organization's directories stop working with it.
                "JOIN organizations o ON o.id = d.organization_id "
                "WHERE t.token_hash = ? AND t.revoked_time IS NULL",
                {digest}));
  if (rows.empty() || !crypto::constant_time_equals(rows[0].str(0), digest)) return refused;
  DirectoryCaller caller{rows[0].str(1), rows[0].str(2)};
  if (rows[0].boolean(3)) {
    (void)db_.execute("UPDATE scim_directories SET last_used_time = ? WHERE id = ?",
                      {db_now(), caller.directory_id});
  }
  return caller;
}

}  // namespace portcullis::scim
