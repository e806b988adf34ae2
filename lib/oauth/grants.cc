#include "oauth/grants.h"

#include <algorithm>

#include "core/ids.h"
#include "core/time.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "oauth/grant_revocation.h"

namespace portcullis::oauth {
namespace {

constexpr const char* kGrantColumns =
    "g.id, g.user_id, g.client_id, g.resource_id, g.scope, g.auth_time, g.organization_id, "
    "g.absolute_expires_at, g.revoked_at, g.dpop_jkt";
constexpr size_t kGrantColumnCount = 10;

Grant grant_from(const store::Row& r, size_t at = 0) {
  Grant g;
  g.id = r.str(at);
  g.user_id = r.str(at + 1);
  g.client_id = r.str(at + 2);
  g.resource_id = r.str(at + 3);
  g.scope = r.str(at + 4);
  g.auth_time = r.i64(at + 5);
  g.organization_id = r.str(at + 6);
  g.absolute_expires_at = r.i64(at + 7);
  if (!r.is_null(at + 8)) g.revoked_at = r.i64(at + 8);
  g.dpop_jkt = r.str(at + 9);
  return g;
}

}  // namespace

Status GrantStore::create(Grant& g) {
  g.id = new_id("grt_");
  return db_
      .execute(
          "INSERT INTO grants (id, user_id, client_id, resource_id, scope, auth_time, "
          "organization_id, create_time, absolute_expires_at, dpop_jkt) VALUES (?, ?, ?, ?, ?, "
          "?, ?, ?, ?, ?)",
          {g.id, g.user_id, g.client_id, g.resource_id, g.scope, g.auth_time,
           g.organization_id.empty() ? store::Value(nullptr) : store::Value(g.organization_id),
           db_now(), g.absolute_expires_at,
           g.dpop_jkt.empty() ? store::Value(nullptr) : store::Value(g.dpop_jkt)})
      .status();
}

Result<Grant> GrantStore::get(const std::string& grant_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(std::string("SELECT ") + kGrantColumns +
                                                              " FROM grants g WHERE g.id = ?",
                                                          {grant_id}));
  if (rows.empty()) return Status::not_found("unknown grant");
  return grant_from(rows[0]);
}

Result<std::string> GrantStore::issue_refresh_token(const Grant& grant, int64_t now,
                                                    int64_t idle_seconds) {
  std::string token = crypto::random_token(32);
  int64_t expires = std::min(now + idle_seconds, grant.absolute_expires_at);
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("INSERT INTO refresh_tokens (token_hash, grant_id, create_time, expires_at) "
                  "VALUES (?, ?, ?, ?)",
                  {crypto::sha256(token), grant.id, db_now(), expires})
          .status());
  return token;
}

Result<LockedRefreshToken> GrantStore::lock_refresh_token(const std::string& token) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kGrantColumns +
                    ", t.expires_at, t.rotated_at FROM refresh_tokens t JOIN grants g ON "
                    "g.id = t.grant_id WHERE t.token_hash = ? FOR UPDATE",
                {crypto::sha256(token)}));
  if (rows.empty()) return Status::not_found("unknown refresh token");
  LockedRefreshToken out;
  out.grant = grant_from(rows[0]);
  out.expires_at = rows[0].i64(kGrantColumnCount);
  if (!rows[0].is_null(kGrantColumnCount + 1)) out.rotated_at = rows[0].i64(kGrantColumnCount + 1);
  return out;
}

Status GrantStore::mark_rotated(const std::string& token, int64_t now) {
  return db_
      .execute("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ?",
               {now, crypto::sha256(token)})
      .status();
}

Status GrantStore::revoke(const std::string& grant_id, const std::string& reason, int64_t now) {
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("UPDATE grants SET revoked_at = ?, revoke_reason = ? WHERE id = ? AND "
                  "revoked_at IS NULL",
                  {now, reason, grant_id})
          .status());
  return db_
      .execute("UPDATE access_tokens SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL",
               {now, grant_id})
      .status();
}

Status GrantStore::revoke_all_for_user(const std::string& user_id, const std::string& reason,
                                       int64_t now) {
  return revoke_all_grants(db_, GrantsOf::kUser, user_id, reason, now);
}

Status GrantStore::record_access_token(const std::string& jti, const std::string& grant_id,
                                       int64_t expires_at) {
  return db_
      .execute("INSERT INTO access_tokens (jti, grant_id, expires_at) VALUES (?, ?, ?)",
               {jti, grant_id.empty() ? store::Value(nullptr) : store::Value(grant_id), expires_at})
      .status();
}

Status GrantStore::revoke_access_token(const std::string& jti, int64_t expires_at, int64_t now) {
  return db_
      .execute(
          "INSERT INTO access_tokens (jti, expires_at, revoked_at) VALUES (?, ?, ?) ON "
          "DUPLICATE KEY UPDATE revoked_at = COALESCE(revoked_at, VALUES(revoked_at))",
          {jti, expires_at, now})
      .status();
}

Result<bool> GrantStore::is_access_token_revoked(const std::string& jti) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows, db_.query("SELECT revoked_at FROM access_tokens WHERE jti = ?", {jti}));
  return !rows.empty() && !rows[0].is_null(0);
}

Status GrantStore::prune(int64_t now) {
  // Everything here is useless once expired; keep a day of slack for investigations.
  const int64_t before = now - 86400;
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("DELETE FROM access_tokens WHERE expires_at < ?", {before}).status());
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("DELETE FROM refresh_tokens WHERE expires_at < ?", {before}).status());
  return db_
      .execute(
          "DELETE FROM grants WHERE absolute_expires_at < ? OR (revoked_at IS NOT NULL AND "
          "revoked_at < ?)",
          {before, before})
      .status();
}

}  // namespace portcullis::oauth
