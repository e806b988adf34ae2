// Signed-in browsers (table `browser_sessions`). The cookie holds a random 256-bit token; only
// its SHA-256 is stored, so a database reader cannot mint a cookie. Cookie attributes:
//
//   https base URL:  __Host-portcullis_session=…; Path=/; Max-Age=…; Secure; HttpOnly; SameSite=Lax
//   http (local):    portcullis_session=…; Path=/; Max-Age=…; HttpOnly; SameSite=Lax
//
// `__Host-` pins the cookie to this exact origin (no Domain, Secure, Path=/), so a sibling
// subdomain cannot plant or overwrite it; browsers refuse that prefix without Secure, hence the
// plain name on the local http://127.0.0.1 stack. SameSite=Lax keeps the cookie off
// cross-site form posts (the consent POST relies on it) while the e-mailed link, a top-level
// navigation, still finds the browser's session.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "http/request.h"
#include "store/db.h"

namespace portcullis::identity {

struct Session {
  std::string user_id;
  int64_t auth_time = 0;  // when the user proved who they are (OIDC auth_time)
  // Read with the session when current() was given a consent to look for: the stored scopes
  // the user granted that client for that resource (tokens/consents.h), nullopt when none.
  std::optional<std::string> consented_scopes;
};

// The remembered consent current() reads with the session (the signed-in authorization
// request: one round trip for both).
struct ConsentOf {
  std::string client_id;
  std::string resource_id;
};

// A live browser session as the admin portal lists it (never its token).
struct SessionInfo {
  int64_t auth_time = 0;
  int64_t expires_at = 0;
  std::string ip;
  std::string user_agent;
  std::string create_time;  // RFC 3339
};

class SessionStore {
 public:
  SessionStore(store::Db& db, const config::Config& config);

  // The session the request's cookie names: unexpired, unrevoked, of an active user; nullopt
  // otherwise (a database failure counts as signed out, so the user is asked to sign in).
  std::optional<Session> current(const http::Request& request, int64_t now,
                                 const std::optional<ConsentOf>& consent = std::nullopt);

  // Starts a session and returns the Set-Cookie header value. The session the request's
  // cookie named, if any, is revoked: every sign-in gets a fresh token.
  Result<std::string> create(const std::string& user_id, int64_t auth_time,
                             const http::Request& request, int64_t now);

  // Ends the session the request's cookie names, if any (the admin portal's sign-out).
  Status end(const http::Request& request, int64_t now);
  // The user's live sessions, newest first, at most `limit`.
  Result<std::vector<SessionInfo>> live_of_user(const std::string& user_id, int64_t now, int limit);
  // Ends every session of a user (deactivation, "sign out everywhere").
  Status revoke_all_for_user(const std::string& user_id);
  // The same for callers without a config (the user store, inside its transaction).
  static Status revoke_all_for_user(store::Db& db, const std::string& user_id, int64_t now);
  // A deleted user's sessions, inside the transaction that deletes the user.
  static Status remove_all_for_user(store::Db& db, const std::string& user_id);

  const std::string& cookie_name() const { return cookie_name_; }
  // The Set-Cookie value that removes the cookie from the browser.
  std::string clearing_cookie() const;

  // Deletes sessions that expired or were revoked more than a day ago (a periodic task).
  static Status prune(store::Db& db, int64_t now);

 private:
  std::optional<std::string> presented_token_hash(const http::Request& request) const;
  std::string cookie(const std::string& value, int64_t max_age) const;

  store::Db& db_;
  int64_t lifetime_seconds_;
  bool secure_;
  std::string cookie_name_;
};

}  // namespace portcullis::identity
