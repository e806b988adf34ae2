#include "admin/session_store.h"

#include "crypto/base64.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "log/log.h"

namespace portcullis::admin {
namespace {

constexpr size_t kTokenBytes = 32;
// The idle clock is moved at most this often: a burst of page views writes once.
constexpr int64_t kTouchEverySeconds = 60;

bool looks_like_token(std::string_view v) {
  auto raw = crypto::base64url_decode(v);
  return raw && raw->size() == kTokenBytes;
}

std::string csrf_of(const std::string& token) {
  return crypto::base64url_encode(crypto::sha256("portcullis-admin-csrf:" + token));
}

}  // namespace

SessionStore::SessionStore(store::Db& db, const config::Config& config)
    : db_(db),
      idle_seconds_(config.admin_idle_timeout_seconds),
      lifetime_seconds_(config.admin_session_lifetime_seconds),
      secure_(config.base_url.rfind("https://", 0) == 0),
      cookie_name_(secure_ ? "__Host-portcullis_admin" : "portcullis_admin") {}

std::optional<std::string> SessionStore::presented_token(const http::Request& request) const {
  auto value = request.cookie(cookie_name_);
  if (!value || !looks_like_token(*value)) return std::nullopt;
  return *value;
}

std::optional<AdminSession> SessionStore::current(const http::Request& request, int64_t now) {
  auto token = presented_token(request);
  if (!token) return std::nullopt;
  const std::string hash = crypto::sha256(*token);
  auto rows = db_.query(
      "SELECT s.user_id, s.auth_time, s.created_at, s.expires_at, s.last_seen_at "
      "FROM admin_sessions s JOIN users u ON u.id = s.user_id "
      "WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ? "
      "AND s.last_seen_at > ? AND u.active",
      {hash, now, now - idle_seconds_});
  if (!rows) {
    log::warn("admin session lookup failed", {{"error", rows.status().to_string()}});
    return std::nullopt;
  }
  if (rows->empty()) return std::nullopt;
  const store::Row& r = (*rows)[0];
  if (r.i64(4) < now - kTouchEverySeconds) {
    auto touched =
        db_.execute("UPDATE admin_sessions SET last_seen_at = ? WHERE token_hash = ?", {now, hash});
    if (!touched) log::warn("admin session not touched", {{"error", touched.status().to_string()}});
  }
  return AdminSession{r.str(0), r.i64(1), r.i64(2), r.i64(3), csrf_of(*token)};
}

Result<std::string> SessionStore::create(const std::string& user_id, int64_t auth_time,
                                         const http::Request& request, int64_t now) {
  if (auto previous = presented_token(request)) PORTCULLIS_RETURN_IF_ERROR(end(request, now));
  std::string token = crypto::random_token(kTokenBytes);
  std::string user_agent = request.header("user-agent").value_or("").substr(0, 512);
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("INSERT INTO admin_sessions (token_hash, user_id, auth_time, created_at, "
                  "last_seen_at, expires_at, ip, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                  {crypto::sha256(token), user_id, auth_time, now, now, now + lifetime_seconds_,
                   request.remote_addr.substr(0, 64), user_agent})
          .status());
  std::string c = cookie_name_ + "=" + token + "; Path=/";
  if (secure_) c += "; Secure";
  return c + "; HttpOnly; SameSite=Lax";
}

Status SessionStore::end(const http::Request& request, int64_t now) {
  auto token = presented_token(request);
  if (!token) return Status::ok();
  return db_
      .execute(
          "UPDATE admin_sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL",
          {now, crypto::sha256(*token)})
      .status();
}

Status SessionStore::end_all_for_user(const std::string& user_id, int64_t now) {
  return db_
      .execute("UPDATE admin_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL",
               {now, user_id})
      .status();
}

std::string SessionStore::clearing_cookie() const {
  std::string c = cookie_name_ + "=; Path=/; Max-Age=0";
  if (secure_) c += "; Secure";
  return c + "; HttpOnly; SameSite=Lax";
}

Status SessionStore::prune(store::Db& db, int64_t now) {
  const int64_t grace = 86400;
  return db
      .execute(
          "DELETE FROM admin_sessions WHERE expires_at < ? OR revoked_at < ? OR "
          "last_seen_at < ?",
          {now - grace, now - grace, now - 7 * 86400 - grace})
      .status();
}

}  // namespace portcullis::admin
