#include "sso/sso_requests.h"

#include "core/time.h"
#include "crypto/base64.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "format/json.h"

namespace portcullis::sso {

Result<PendingSignIn> SsoRequestStore::derive(PendingSignIn p, const std::string& browser) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string key, master_key_.derive_subkey("sso-request.v1"));
  p.code_verifier = crypto::base64url_encode(
      crypto::hmac_sha256(key, "code_verifier\n" + p.state + "\n" + browser));
  p.nonce =
      crypto::base64url_encode(crypto::hmac_sha256(key, "nonce\n" + p.state + "\n" + browser));
  return p;
}

Result<PendingSignIn> SsoRequestStore::start(const std::string& connection_id,
                                             const std::string& login_request_id,
                                             const std::string& browser_secret, int64_t now) {
  PendingSignIn p;
  p.connection_id = connection_id;
  p.login_request_id = login_request_id;
  p.state = crypto::random_token(24);
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("INSERT INTO sso_requests (state_hash, browser_hash, connection_id, "
                  "login_request_id, create_time, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                  {crypto::sha256(p.state), crypto::sha256(browser_secret), connection_id,
                   login_request_id, db_now(), now + kSsoRequestLifetimeSeconds})
          .status());
  return derive(std::move(p), browser_secret);
}

Result<std::optional<PendingSignIn>> SsoRequestStore::take(const std::string& state,
                                                           const std::string& browser_secret,
                                                           int64_t now) {
  if (state.empty() || state.size() > 128) {
    return std::optional<PendingSignIn>();
  }
  const std::string state_hash = crypto::sha256(state);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT browser_hash, connection_id, login_request_id, saml_result FROM "
                "sso_requests "
                "WHERE state_hash = ? AND used_at IS NULL AND expires_at > ?",
                {state_hash, now}));
  if (rows.empty()) return std::optional<PendingSignIn>();
  if (!crypto::constant_time_equals(rows[0].str(0), crypto::sha256(browser_secret))) {
    PendingSignIn foreign;
    foreign.connection_id = rows[0].str(1);
    foreign.login_request_id = rows[0].str(2);
    foreign.browser_matches = false;
    return std::optional<PendingSignIn>(std::move(foreign));
  }
  // Used once: of two racing callbacks only the one whose UPDATE changed the row goes on.
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t used,
      db_.execute("UPDATE sso_requests SET used_at = ? WHERE state_hash = ? AND used_at IS NULL",
                  {now, state_hash}));
  if (used == 0) return std::optional<PendingSignIn>();
  PendingSignIn p;
  p.connection_id = rows[0].str(1);
  p.login_request_id = rows[0].str(2);
  p.state = state;
  if (!rows[0].is_null(3)) {
    auto result = json::parse(rows[0].str(3));
    if (!result) return Status::internal("stored SAML result is not JSON");
    p.saml_result = std::move(result).value();
  }
  PORTCULLIS_ASSIGN_OR_RETURN(PendingSignIn derived, derive(std::move(p), browser_secret));
  return std::optional<PendingSignIn>(std::move(derived));
}

Status SsoRequestStore::set_saml_request_id(const std::string& state,
                                            const std::string& request_id) {
  return db_
      .execute("UPDATE sso_requests SET saml_request_id = ? WHERE state_hash = ?",
               {request_id, crypto::sha256(state)})
      .status();
}

Result<std::optional<SamlPending>> SsoRequestStore::find_saml(const std::string& state,
                                                              int64_t now) {
  if (state.empty() || state.size() > 128) return std::optional<SamlPending>();
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT connection_id, login_request_id, saml_request_id FROM sso_requests "
                "WHERE state_hash = ? AND used_at IS NULL AND expires_at > ? AND "
                "saml_request_id IS NOT NULL AND saml_result IS NULL",
                {crypto::sha256(state), now}));
  if (rows.empty()) return std::optional<SamlPending>();
  return std::optional<SamlPending>(SamlPending{rows[0].str(0), rows[0].str(1), rows[0].str(2)});
}

Result<bool> SsoRequestStore::record_saml_result(const std::string& state,
                                                 const Json::Value& result) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t n, db_.execute("UPDATE sso_requests SET saml_result = ? WHERE state_hash = ? AND "
                              "used_at IS NULL AND saml_result IS NULL",
                              {json::write(result), crypto::sha256(state)}));
  return n == 1;
}

Result<bool> SsoRequestStore::remember_assertion(const std::string& connection_id,
                                                 const std::string& assertion_id,
                                                 int64_t expires_at) {
  auto inserted = db_.execute(
      "INSERT INTO sso_assertion_ids (connection_id, assertion_hash, expires_at) VALUES (?, ?, ?)",
      {connection_id, crypto::sha256(assertion_id), expires_at});
  if (!inserted) {
    if (inserted.status().code() == Code::kAlreadyExists) return false;
    return inserted.status();
  }
  return true;
}

Status SsoRequestStore::prune(store::Db& db, int64_t now) {
  PORTCULLIS_RETURN_IF_ERROR(
      db.execute("DELETE FROM sso_assertion_ids WHERE expires_at < ?", {now}).status());
  return db.execute("DELETE FROM sso_requests WHERE expires_at < ?", {now}).status();
}

}  // namespace portcullis::sso
