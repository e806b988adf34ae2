#include "tokens/grants.h"

#include <algorithm>
#include <iterator>

#include "core/ids.h"
#include "core/time.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "events/event_store.h"
#include "tokens/access_token.h"
#include "tokens/grant_revocation.h"

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

// The values of a grant's row, in the column order of create() and of the stored procedure
// portcullis_create_code_grant (sql/0093_sealed_codes.sql).
store::Params grant_row(const Grant& g) {
  return {g.id,
          g.user_id,
          g.client_id,
          g.resource_id,
          g.scope,
          g.auth_time,
          g.organization_id.empty() ? store::Value(nullptr) : store::Value(g.organization_id),
          db_now(),
          g.absolute_expires_at,
          g.dpop_jkt.empty() ? store::Value(nullptr) : store::Value(g.dpop_jkt)};
}

// Appends `values` to a statement's parameters.
void append(store::Params& params, store::Params values) {
  params.insert(params.end(), std::make_move_iterator(values.begin()),
                std::make_move_iterator(values.end()));
}

// A new refresh token of the grant and its row's five values (token_hash, grant_id, parent_hash,
// create_time, expires_at: the last five of portcullis_record_event); `parent_hash` names the
// token it replaces (null for the first), and the unique key on it refuses a second replacement
// of the same token.
struct NewRefreshToken {
  std::string token;
  store::Params row;
};

NewRefreshToken new_refresh_token(const Grant& grant, store::Value parent_hash, int64_t now,
                                  int64_t idle_seconds) {
  std::string token = crypto::random_token(32);
  int64_t expires = std::min(now + idle_seconds, grant.absolute_expires_at);
  store::Params row{crypto::sha256(token), grant.id, std::move(parent_hash), db_now(), expires};
  return {std::move(token), std::move(row)};
}

// With `event`, the token and the event are one CALL (sql/0090_event_outbox.sql): both are
// written or neither, and a duplicate parent_hash comes back as the same AlreadyExists.
Result<std::string> insert_refresh_token(store::Db& db, const Grant& grant,
                                         store::Value parent_hash, int64_t now,
                                         int64_t idle_seconds, const events::Event* event) {
  NewRefreshToken fresh = new_refresh_token(grant, std::move(parent_hash), now, idle_seconds);
  if (!event) {
    PORTCULLIS_RETURN_IF_ERROR(
        db.execute("INSERT INTO refresh_tokens (token_hash, grant_id, parent_hash, create_time, "
                   "expires_at) VALUES (?, ?, ?, ?, ?)",
                   fresh.row)
            .status());
    return std::move(fresh.token);
  }
  store::Params call = events::event_row(*event);
  append(call, std::move(fresh.row));
  PORTCULLIS_RETURN_IF_ERROR(db.execute(events::kRecordEventCall, call).status());
  return std::move(fresh.token);
}

}  // namespace

Status GrantStore::create(Grant& g) {
  if (g.id.empty()) g.id = new_id("grt_");
  return db_
      .execute(
          "INSERT INTO grants (id, user_id, client_id, resource_id, scope, auth_time, "
          "organization_id, create_time, absolute_expires_at, dpop_jkt) VALUES (?, ?, ?, ?, ?, "
          "?, ?, ?, ?, ?)",
          grant_row(g))
      .status();
}

Result<std::optional<std::string>> GrantStore::create_from_code(Grant& g, int64_t now,
                                                                int64_t idle_seconds,
                                                                bool with_refresh_token,
                                                                const events::Event& event) {
  if (g.id.empty()) g.id = new_id("grt_");
  store::Params call = grant_row(g);
  append(call, events::event_row(event));
  std::optional<std::string> token;
  if (with_refresh_token) {
    NewRefreshToken fresh = new_refresh_token(g, nullptr, now, idle_seconds);
    append(call, std::move(fresh.row));
    token = std::move(fresh.token);
  } else {
    call.resize(call.size() + 5, store::Value(nullptr));  // no refresh token: five NULLs
  }
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("CALL portcullis_create_code_grant(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                  "?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  call)
          .status());
  return token;
}

Result<Grant> GrantStore::get(const std::string& grant_id) {
  static const std::string kSql =
      std::string("SELECT ") + kGrantColumns + " FROM grants g WHERE g.id = ?";
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(kSql, {grant_id}));
  if (rows.empty()) return Status::not_found("unknown grant");
  return grant_from(rows[0]);
}

Result<std::vector<Grant>> GrantStore::live_of_user(const std::string& user_id, int64_t now,
                                                    int limit) {
  static const std::string kSql = std::string("SELECT ") + kGrantColumns +
                                  " FROM grants g WHERE g.user_id = ? AND g.revoked_at IS NULL AND "
                                  "g.absolute_expires_at > ? ORDER BY g.create_time DESC LIMIT ?";
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                              db_.query(kSql, {user_id, now, static_cast<int64_t>(limit)}));
  std::vector<Grant> out;
  for (const auto& r : rows) out.push_back(grant_from(r));
  return out;
}

Result<std::string> GrantStore::issue_refresh_token(const Grant& grant, int64_t now,
                                                    int64_t idle_seconds,
                                                    const events::Event* event) {
  return insert_refresh_token(db_, grant, nullptr, now, idle_seconds, event);
}

jose::JwsAlg signing_alg_column(std::string_view stored) {
  return jose::alg_from_name(stored).value_or(jose::JwsAlg::kRS256);
}

Result<RefreshTokenState> GrantStore::find_refresh_token(const std::string& token) {
  // The user and the resource come along (a refresh needs both), and "rotated" is the parent
  // link of migration 0009 or, for tokens rotated before it, rotated_at.
  static const std::string kSql =
      std::string("SELECT ") + kGrantColumns +
      ", t.expires_at, t.rotated_at IS NOT NULL OR EXISTS (SELECT 1 FROM "
      "refresh_tokens c WHERE c.parent_hash = t.token_hash), u.active, r.id, "
      "r.server_url, r.access_token_ttl_seconds, r.access_token_signing_alg FROM "
      "refresh_tokens t JOIN grants g "
      "ON g.id = t.grant_id LEFT JOIN users u ON u.id = g.user_id LEFT JOIN "
      "resources r ON r.id = g.resource_id WHERE t.token_hash = ?";
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(kSql, {crypto::sha256(token)}));
  if (rows.empty()) return Status::not_found("unknown refresh token");
  const store::Row& r = rows[0];
  constexpr size_t at = kGrantColumnCount;
  RefreshTokenState out;
  out.grant = grant_from(r);
  out.expires_at = r.i64(at);
  out.rotated = r.boolean(at + 1);
  if (!r.is_null(at + 2)) out.user_active = r.boolean(at + 2);
  if (!r.is_null(at + 3)) {
    GrantResource resource;
    resource.id = r.str(at + 3);
    resource.server_url = r.str(at + 4);
    resource.access_token_ttl_seconds = static_cast<int>(r.i64(at + 5));
    resource.access_token_signing_alg = signing_alg_column(r.str(at + 6));
    out.resource = std::move(resource);
  }
  return out;
}

Result<std::string> GrantStore::rotate_refresh_token(const Grant& grant,
                                                     const std::string& presented, int64_t now,
                                                     int64_t idle_seconds,
                                                     const events::Event* event) {
  return insert_refresh_token(db_, grant, crypto::sha256(presented), now, idle_seconds, event);
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

Status GrantStore::revoke_access_token(const std::string& jti, int64_t expires_at, int64_t now) {
  return db_
      .execute(
          "INSERT INTO access_tokens (jti, expires_at, revoked_at) VALUES (?, ?, ?) ON "
          "DUPLICATE KEY UPDATE revoked_at = COALESCE(revoked_at, VALUES(revoked_at))",
          {jti, expires_at, now})
      .status();
}

Result<bool> GrantStore::is_access_token_revoked(const std::string& jti) {
  const std::optional<std::string_view> grant = grant_of_jti(jti);
  // One round trip: the token's own deny-list entry, and whether its grant still stands.
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT EXISTS (SELECT 1 FROM access_tokens WHERE jti = ? AND revoked_at IS NOT "
                "NULL), EXISTS (SELECT 1 FROM grants WHERE id = ? AND revoked_at IS NULL)",
                {jti, std::string(grant.value_or(""))}));
  if (rows.empty()) return Status::internal("no answer from the deny-list query");
  if (rows[0].boolean(0)) return true;
  return grant && !rows[0].boolean(1);
}

Status GrantStore::prune(int64_t now) {
  // Everything here is useless once expired; keep a day of slack for investigations. A revoked
  // grant carries its revocation to every validator's deny-list (grant_revocation.h), so it
  // stays until no access token it covers can be valid: kRevokedGrantRetentionSeconds.
  const int64_t before = now - kRevokedGrantRetentionSeconds;
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

// The revocation cascades of grant_revocation.h: this file is the one writer of grants,
// refresh_tokens and access_tokens.
namespace {

// `where` is one of the closed set of conditions below, never a caller's text.
Status revoke_where(store::Db& db, const std::string& where, const store::Params& owner,
                    std::string_view reason, int64_t now) {
  store::Params tokens = {now};
  tokens.insert(tokens.end(), owner.begin(), owner.end());
  tokens.emplace_back(now);
  PORTCULLIS_RETURN_IF_ERROR(db.execute("UPDATE access_tokens a JOIN grants g ON a.grant_id = g.id "
                                        "SET a.revoked_at = ? WHERE " +
                                            where +
                                            " AND a.revoked_at IS NULL AND a.expires_at > ?",
                                        tokens)
                                 .status());
  store::Params grants = {now, std::string(reason)};
  grants.insert(grants.end(), owner.begin(), owner.end());
  return db
      .execute("UPDATE grants g SET g.revoked_at = ?, g.revoke_reason = ? WHERE " + where +
                   " AND g.revoked_at IS NULL",
               grants)
      .status();
}

}  // namespace

Status revoke_all_grants(store::Db& db, GrantsOf owner, const std::string& owner_id,
                         std::string_view reason, int64_t now) {
  const char* where = owner == GrantsOf::kResource       ? "g.resource_id = ?"
                      : owner == GrantsOf::kClient       ? "g.client_id = ?"
                      : owner == GrantsOf::kOrganization ? "g.organization_id = ?"
                                                         : "g.user_id = ?";
  return revoke_where(db, where, {owner_id}, reason, now);
}

Status revoke_grants_of_membership(store::Db& db, const std::string& organization_id,
                                   const std::string& user_id, std::string_view reason,
                                   int64_t now) {
  return revoke_where(db, "g.user_id = ? AND g.organization_id = ?", {user_id, organization_id},
                      reason, now);
}

Status revoke_grants_of_deleted_user(store::Db& db, const std::string& user_id, int64_t now) {
  PORTCULLIS_RETURN_IF_ERROR(revoke_all_grants(db, GrantsOf::kUser, user_id, "user_deleted", now));
  return db
      .execute(
          "DELETE r FROM refresh_tokens r JOIN grants g ON r.grant_id = g.id "
          "WHERE g.user_id = ?",
          {user_id})
      .status();
}

}  // namespace portcullis::oauth
