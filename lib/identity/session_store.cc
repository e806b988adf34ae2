#include "identity/session_store.h"

#include "core/time.h"
#include "crypto/base64.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "log/log.h"
#include "organizations/membership_store.h"
#include "tokens/consents.h"

namespace portcullis::identity {
namespace {

constexpr size_t kTokenBytes = 32;

// Exactly what create() hands out: base64url of 32 bytes. Anything else is not looked up.
bool looks_like_token(std::string_view v) {
  auto raw = crypto::base64url_decode(v);
  return raw && raw->size() == kTokenBytes;
}

}  // namespace

Result<std::optional<Session>> live_session(store::Db& db, const store::Row& row, size_t at) {
  if (row.is_null(at)) return std::optional<Session>();
  Session session{row.str(at), row.i64(at + 1), row.opt(at + 2).value_or(""), std::nullopt};
  if (!session.organization_id.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        std::optional<std::string> status,
        organizations::MembershipStore(db).status_of(session.organization_id, session.user_id));
    if (!status || *status == "inactive") return std::optional<Session>();
  }
  return std::optional<Session>(std::move(session));
}

SessionStore::SessionStore(store::Db& db, const config::Config& config)
    : db_(db),
      lifetime_seconds_(config.session_lifetime_seconds),
      secure_(config.base_url.rfind("https://", 0) == 0),
      cookie_name_(secure_ ? "__Host-portcullis_session" : "portcullis_session") {}

std::optional<std::string> SessionStore::presented_token_hash(const http::Request& request) const {
  auto value = request.cookie(cookie_name_);
  if (!value || !looks_like_token(*value)) return std::nullopt;
  return crypto::sha256(*value);
}

std::optional<Session> SessionStore::current(const http::Request& request, int64_t now,
                                             const std::optional<ConsentOf>& consent) {
  auto hash = presented_token_hash(request);
  if (!hash) return std::nullopt;
  // With `consent`, the user's remembered consent comes along (LEFT JOIN: NULL when none).
  static const std::string kSessionSql = std::string("SELECT ") + kLiveSessionColumns + " FROM " +
                                         kLiveSessionTables + " WHERE " + kLiveSessionCondition;
  static const std::string kWithConsentSql =
      std::string("SELECT ") + kLiveSessionColumns + ", c.scopes FROM " + kLiveSessionTables +
      " LEFT JOIN consents c ON c.user_id = s.user_id AND c.client_key = ? AND "
      "c.resource_id = ? WHERE " +
      kLiveSessionCondition;
  const std::string& sql = consent ? kWithConsentSql : kSessionSql;
  store::Params params;
  if (consent) {
    params = {oauth::ConsentStore::client_key(consent->client_id), consent->resource_id};
  }
  params.emplace_back(*hash);
  params.emplace_back(now);
  auto rows = db_.query(sql, params);
  if (!rows) {
    log::warn("session lookup failed", {{"error", rows.status().to_string()}});
    return std::nullopt;
  }
  if (rows->empty()) return std::nullopt;
  const store::Row& r = (*rows)[0];
  auto session = live_session(db_, r, 0);
  if (!session) {
    log::warn("session lookup failed", {{"error", session.status().to_string()}});
    return std::nullopt;
  }
  if (*session && consent) (*session)->consented_scopes = r.opt(kLiveSessionColumnCount);
  return std::move(session).value();
}

Result<std::string> SessionStore::create(const std::string& user_id, int64_t auth_time,
                                         const http::Request& request, int64_t now,
                                         const std::string& organization_id) {
  if (auto previous = presented_token_hash(request)) {
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("UPDATE browser_sessions SET revoked_at = ? WHERE token_hash = ? AND "
                    "revoked_at IS NULL",
                    {now, *previous})
            .status());
  }
  std::string token = crypto::random_token(kTokenBytes);
  std::string user_agent = request.header("user-agent").value_or("").substr(0, 512);
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("INSERT INTO browser_sessions (token_hash, user_id, auth_time, expires_at, ip, "
                  "user_agent, create_time, organization_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                  {crypto::sha256(token), user_id, auth_time, now + lifetime_seconds_,
                   request.remote_addr.substr(0, 64), user_agent, db_now(),
                   organization_id.empty() ? store::Value(nullptr) : store::Value(organization_id)})
          .status());
  return cookie(token, lifetime_seconds_);
}

Status SessionStore::end(const http::Request& request, int64_t now) {
  auto hash = presented_token_hash(request);
  if (!hash) return Status::ok();
  return db_
      .execute(
          "UPDATE browser_sessions SET revoked_at = ? WHERE token_hash = ? AND "
          "revoked_at IS NULL",
          {now, *hash})
      .status();
}

Result<std::vector<SessionInfo>> SessionStore::live_of_user(const std::string& user_id, int64_t now,
                                                            int limit) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT auth_time, expires_at, ip, user_agent, create_time FROM browser_sessions "
                "WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ? "
                "ORDER BY create_time DESC LIMIT ?",
                {user_id, now, static_cast<int64_t>(limit)}));
  std::vector<SessionInfo> out;
  for (const auto& r : rows) {
    out.push_back(SessionInfo{r.i64(0), r.i64(1), r.opt(2).value_or(""), r.opt(3).value_or(""),
                              db_time_to_rfc3339(r.str(4))});
  }
  return out;
}

Status SessionStore::revoke_all_for_user(const std::string& user_id) {
  return revoke_all_for_user(db_, user_id, unix_now());
}

Status SessionStore::revoke_all_for_user(store::Db& db, const std::string& user_id, int64_t now) {
  return db
      .execute(
          "UPDATE browser_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL",
          {now, user_id})
      .status();
}

Status SessionStore::remove_all_for_user(store::Db& db, const std::string& user_id) {
  return db.execute("DELETE FROM browser_sessions WHERE user_id = ?", {user_id}).status();
}

std::string SessionStore::clearing_cookie() const {
  return cookie("", 0);
}

std::string SessionStore::cookie(const std::string& value, int64_t max_age) const {
  std::string c = cookie_name_ + "=" + value + "; Path=/; Max-Age=" + std::to_string(max_age);
  if (secure_) c += "; Secure";
  c += "; HttpOnly; SameSite=Lax";
  return c;
}

Status SessionStore::prune(store::Db& db, int64_t now) {
  const int64_t grace = 86400;  // keep a day of ended sessions for support questions
  return db
      .execute("DELETE FROM browser_sessions WHERE expires_at < ? OR revoked_at < ?",
               {now - grace, now - grace})
      .status();
}

}  // namespace portcullis::identity
