#include "tokens/grants.h"

#include <algorithm>
#include <iterator>

#include "core/ids.h"
#include "core/time.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "events/event_store.h"
#include "tokens/access_token.h"
#include "tokens/grant_revocation.h"
#include "tokens/sealed_refresh.h"
#include "tokens/sealed_value.h"

namespace portcullis::oauth {
namespace {

constexpr const char* kGrantColumns =
    "g.id, g.user_id, g.client_id, g.resource_id, g.scope, g.auth_time, g.organization_id, "
    "g.absolute_expires_at, g.revoked_at, g.dpop_jkt, g.refresh_generation";
constexpr size_t kGrantColumnCount = 11;

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
  g.refresh_generation = r.i64(at + 10);
  return g;
}

// What a refresh reads besides the grant (kStateColumns, joined as kStateJoins), from `at`.
constexpr const char* kStateColumns =
    "u.active, r.id, r.server_url, r.access_token_ttl_seconds, r.access_token_signing_alg";
constexpr const char* kStateJoins =
    " LEFT JOIN users u ON u.id = g.user_id LEFT JOIN resources r ON r.id = g.resource_id";

void read_user_and_resource(const store::Row& r, size_t at, RefreshTokenState& out) {
  if (!r.is_null(at)) out.user_active = r.boolean(at);
  if (!r.is_null(at + 1)) {
    GrantResource resource;
    resource.id = r.str(at + 1);
    resource.server_url = r.str(at + 2);
    resource.access_token_ttl_seconds = static_cast<int>(r.i64(at + 3));
    resource.access_token_signing_alg = signing_alg_column(r.str(at + 4));
    out.resource = std::move(resource);
  }
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

int64_t idle_expiry(const Grant& grant, int64_t now, int64_t idle_seconds) {
  return std::min(now + idle_seconds, grant.absolute_expires_at);
}

// A sealed refresh token of the grant's generation `generation`.
Result<std::string> sealed_token(const crypto::MasterKey& master_key, const Grant& grant,
                                 int64_t generation, int64_t now, int64_t idle_seconds) {
  return seal_refresh_token(master_key, {.grant_id = grant.id,
                                         .generation = generation,
                                         .expires_at = idle_expiry(grant, now, idle_seconds),
                                         .client_digest = binding_digest(grant.client_id),
                                         .user_id = grant.user_id,
                                         .resource_id = grant.resource_id,
                                         .scope = grant.scope,
                                         .organization_id = grant.organization_id,
                                         .dpop_jkt = grant.dpop_jkt,
                                         .auth_time = grant.auth_time,
                                         .absolute_expires_at = grant.absolute_expires_at});
}

// The successor of a stored refresh token (issued before sealed ones), stored too, naming the
// token it replaces as its parent: the unique key on parent_hash refuses a second replacement
// of the same token. With `event`, the token and the event are one CALL
// (sql/0090_event_outbox.sql): both are written or neither, and a duplicate parent_hash comes
// back as the same AlreadyExists.
Result<std::string> rotate_stored_token(store::Db& db, const Grant& grant,
                                        const std::string& presented, int64_t now,
                                        int64_t idle_seconds, const events::Event* event) {
  std::string token = crypto::random_token(32);
  // The row's five values: token_hash, grant_id, parent_hash, create_time, expires_at (the last
  // five of portcullis_record_event).
  store::Params row{crypto::sha256(token), grant.id, crypto::sha256(presented), db_now(),
                    idle_expiry(grant, now, idle_seconds)};
  if (!event) {
    PORTCULLIS_RETURN_IF_ERROR(
        db.execute("INSERT INTO refresh_tokens (token_hash, grant_id, parent_hash, create_time, "
                   "expires_at) VALUES (?, ?, ?, ?, ?)",
                   row)
            .status());
    return token;
  }
  store::Params call = events::event_row(*event);
  append(call, std::move(row));
  PORTCULLIS_RETURN_IF_ERROR(db.execute(events::kRecordEventCall, call).status());
  return token;
}

// The successor of a sealed refresh token of generation `generation`: the grant's row moved to
// generation + 1 unless another rotation came first, or the grant is revoked or past its
// absolute expiry, or its user is deactivated or gone: AlreadyExists then, and the caller reads
// the grant to tell which. With `event`, the UPDATE and the event are one CALL
// (sql/0094_sealed_refresh_tokens.sql), which signals the same duplicate-key error when its
// UPDATE matches nothing. Sealed first, so a failure to seal leaves the presented token live.
Result<std::string> rotate_sealed_token(store::Db& db, const crypto::MasterKey& master_key,
                                        const Grant& grant, int64_t generation, int64_t now,
                                        int64_t idle_seconds, const events::Event* event) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string token,
                              sealed_token(master_key, grant, generation + 1, now, idle_seconds));
  if (!event) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        uint64_t updated,
        db.execute("UPDATE grants g JOIN users u ON u.id = g.user_id SET g.refresh_generation = "
                   "? + 1 WHERE g.id = ? AND g.refresh_generation = ? AND g.revoked_at IS NULL "
                   "AND g.absolute_expires_at > ? AND u.active",
                   {generation, grant.id, generation, now}));
    if (updated == 0) return Status::already_exists("the refresh token was not rotated");
    return token;
  }
  store::Params call{grant.id, generation, now};
  append(call, events::event_row(*event));
  PORTCULLIS_RETURN_IF_ERROR(
      db.execute("CALL portcullis_rotate_grant(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", call)
          .status());
  return token;
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

Result<std::optional<std::string>> GrantStore::create_from_code(
    const crypto::MasterKey& master_key, Grant& g, int64_t now, int64_t idle_seconds,
    bool with_refresh_token, const events::Event& event, CodeGrantChecks checks) {
  if (g.id.empty()) g.id = new_id("grt_");
  g.refresh_generation = 0;  // the column's default: the INSERT leaves it out
  std::optional<std::string> token;
  if (with_refresh_token) {
    PORTCULLIS_ASSIGN_OR_RETURN(token, sealed_token(master_key, g, 0, now, idle_seconds));
  }
  store::Params call = grant_row(g);
  append(call, events::event_row(event));
  if (checks == CodeGrantChecks::kInTheWrite) {
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("CALL portcullis_exchange_code(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "?, ?, ?, ?)",
                    call)
            .status());
    return token;
  }
  // The procedure's stored refresh token: none, a sealed token is stored nowhere (five NULLs).
  call.resize(call.size() + 5, store::Value(nullptr));
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

Result<std::string> GrantStore::issue_refresh_token(const crypto::MasterKey& master_key,
                                                    const Grant& grant, int64_t now,
                                                    int64_t idle_seconds,
                                                    const events::Event* event) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::string token,
      sealed_token(master_key, grant, grant.refresh_generation, now, idle_seconds));
  if (event) {
    store::Params call = events::event_row(*event);
    call.resize(call.size() + 5, store::Value(nullptr));  // no stored token: five NULLs
    PORTCULLIS_RETURN_IF_ERROR(db_.execute(events::kRecordEventCall, call).status());
  }
  return token;
}

jose::JwsAlg signing_alg_column(std::string_view stored) {
  return jose::alg_from_name(stored).value_or(jose::JwsAlg::kRS256);
}

Result<RefreshTokenState> GrantStore::find_refresh_token(const crypto::MasterKey& master_key,
                                                         const std::string& token) {
  if (is_stored_refresh_token(token)) {
    RefreshTokenState out;
    // "rotated" is the parent link of migration 0009 or, for tokens rotated before it,
    // rotated_at.
    static const std::string kSql =
        std::string("SELECT ") + kGrantColumns + ", " + kStateColumns +
        ", t.expires_at, t.rotated_at IS NOT NULL OR EXISTS (SELECT 1 FROM refresh_tokens c "
        "WHERE c.parent_hash = t.token_hash) FROM refresh_tokens t JOIN grants g ON g.id = "
        "t.grant_id" +
        kStateJoins + " WHERE t.token_hash = ?";
    PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(kSql, {crypto::sha256(token)}));
    if (rows.empty()) return Status::not_found("unknown refresh token");
    const store::Row& r = rows[0];
    out.grant = grant_from(r);
    read_user_and_resource(r, kGrantColumnCount, out);
    out.expires_at = r.i64(kGrantColumnCount + 5);
    out.rotated = r.boolean(kGrantColumnCount + 6);
    return out;
  }
  const std::optional<SealedRefresh> sealed = open_refresh_token(master_key, token);
  if (!sealed) return Status::not_found("unknown refresh token");
  return find_sealed_refresh_token(*sealed);
}

Result<RefreshTokenState> GrantStore::find_sealed_refresh_token(const SealedRefresh& sealed) {
  RefreshTokenState out;
  static const std::string kSql = std::string("SELECT ") + kGrantColumns + ", " + kStateColumns +
                                  " FROM grants g" + kStateJoins + " WHERE g.id = ?";
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(kSql, {sealed.grant_id}));
  if (rows.empty()) return Status::not_found("unknown refresh token");
  out.grant = grant_from(rows[0]);
  // Sealed by this server for this grant, so these hold unless the database went back in time
  // (a restored backup): a generation the grant never reached, or another client, is a token
  // this grant does not know, not a reuse.
  if (sealed.generation > out.grant.refresh_generation ||
      !crypto::constant_time_equals(sealed.client_digest, binding_digest(out.grant.client_id))) {
    return Status::not_found("unknown refresh token");
  }
  read_user_and_resource(rows[0], kGrantColumnCount, out);
  out.expires_at = sealed.expires_at;
  out.rotated = sealed.generation < out.grant.refresh_generation;
  out.generation = sealed.generation;
  return out;
}

std::optional<RefreshTokenState> opened_refresh_state(const SealedRefresh& sealed,
                                                      const std::string& client_id) {
  if (!crypto::constant_time_equals(sealed.client_digest, binding_digest(client_id))) {
    return std::nullopt;
  }
  RefreshTokenState out;
  out.grant = {.id = sealed.grant_id,
               .user_id = sealed.user_id,
               .client_id = client_id,
               .resource_id = sealed.resource_id,
               .scope = sealed.scope,
               .auth_time = sealed.auth_time,
               .organization_id = sealed.organization_id,
               .absolute_expires_at = sealed.absolute_expires_at,
               .revoked_at = std::nullopt,
               .dpop_jkt = sealed.dpop_jkt,
               .refresh_generation = sealed.generation};
  out.expires_at = sealed.expires_at;
  out.generation = sealed.generation;
  out.user_active = true;  // the rotation's UPDATE checks it
  return out;
}

Result<std::string> GrantStore::rotate_refresh_token(const crypto::MasterKey& master_key,
                                                     const RefreshTokenState& presented,
                                                     const std::string& token, int64_t now,
                                                     int64_t idle_seconds,
                                                     const events::Event* event) {
  if (presented.generation) {
    return rotate_sealed_token(db_, master_key, presented.grant, *presented.generation, now,
                               idle_seconds, event);
  }
  return rotate_stored_token(db_, presented.grant, token, now, idle_seconds, event);
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
