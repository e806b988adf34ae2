#include "custom_login/custom_logins.h"

#include "core/time.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "format/json.h"

namespace portcullis::custom_login {
namespace {

bool plausible(const std::string& id) {
  return !id.empty() && id.size() <= 128;
}

}  // namespace

Result<std::string> CustomLoginStore::start(const std::string& login_request_id,
                                            const std::string& browser_secret, int64_t now) {
  std::string id = crypto::random_token(24);
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("INSERT INTO custom_logins (id_hash, browser_hash, login_request_id, "
                  "create_time, expires_at) VALUES (?, ?, ?, ?, ?)",
                  {crypto::sha256(id), crypto::sha256(browser_secret), login_request_id, db_now(),
                   now + kCustomLoginLifetimeSeconds})
          .status());
  return id;
}

Result<Outcome> CustomLoginStore::complete(const std::string& id, const Json::Value& user,
                                           int64_t now) {
  if (!plausible(id)) return Outcome::kUnknown;
  const std::string hash = crypto::sha256(id);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT expires_at, completed_at IS NOT NULL FROM custom_logins WHERE id_hash = ?",
                {hash}));
  if (rows.empty()) return Outcome::kUnknown;
  if (rows[0].i64(0) <= now) return Outcome::kExpired;
  if (rows[0].boolean(1)) return Outcome::kUsed;
  // Completed once: of two racing calls only the one whose UPDATE changed the row succeeds.
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t changed,
      db_.execute("UPDATE custom_logins SET completed_at = ?, completed_user = ? WHERE id_hash = ? "
                  "AND completed_at IS NULL AND expires_at > ?",
                  {now, json::write(user), hash, now}));
  return changed == 1 ? Outcome::kOk : Outcome::kUsed;
}

Result<Taken> CustomLoginStore::take(const std::string& id, const std::string& browser_secret,
                                     int64_t now) {
  Taken t;
  if (!plausible(id)) return t;
  const std::string hash = crypto::sha256(id);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT browser_hash, login_request_id, expires_at, completed_user, used_at IS NOT "
                "NULL FROM custom_logins WHERE id_hash = ?",
                {hash}));
  if (rows.empty()) return t;
  t.login_request_id = rows[0].str(1);
  if (rows[0].i64(2) <= now) {
    t.outcome = Outcome::kExpired;
  } else if (rows[0].boolean(4)) {
    t.outcome = Outcome::kUsed;
  } else if (browser_secret.empty() ||
             !crypto::constant_time_equals(rows[0].str(0), crypto::sha256(browser_secret))) {
    t.outcome = Outcome::kOtherBrowser;
  } else if (rows[0].is_null(3)) {
    t.outcome = Outcome::kNotCompleted;
  } else {
    PORTCULLIS_ASSIGN_OR_RETURN(
        uint64_t used,
        db_.execute("UPDATE custom_logins SET used_at = ? WHERE id_hash = ? AND used_at IS NULL",
                    {now, hash}));
    if (used == 0) {
      t.outcome = Outcome::kUsed;
      return t;
    }
    auto user = json::parse(rows[0].str(3));
    if (!user) return Status::internal("stored custom login user is not JSON");
    t.user = std::move(user).value();
    t.outcome = Outcome::kOk;
  }
  return t;
}

Status CustomLoginStore::prune(store::Db& db, int64_t now) {
  return db.execute("DELETE FROM custom_logins WHERE expires_at < ?", {now - 3600}).status();
}

}  // namespace portcullis::custom_login
