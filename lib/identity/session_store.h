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
  // The organization the session signed in through (docs/oauth.md, "The organization in a
  // token"); empty when none.
  std::string organization_id;
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

// current()'s read as part of a larger one (oauth/client_resolver.h reads the session with the
// client of an authorization request): the session `s` of an active user `u`
// (kLiveSessionTables), live and named by the presented token (kLiveSessionCondition, whose two
// parameters are the token's hash, SessionStore::presented_token_hash, and now); it selects
// kLiveSessionColumns (kLiveSessionColumnCount of them), which live_session() reads.
inline constexpr const char* kLiveSessionColumns = "s.user_id, s.auth_time, s.organization_id";
inline constexpr size_t kLiveSessionColumnCount = 3;
inline constexpr const char* kLiveSessionTables =
    "browser_sessions s JOIN users u ON u.id = s.user_id AND u.active";
inline constexpr const char* kLiveSessionCondition =
    "s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ?";

// The session of a row whose kLiveSessionColumns start at `at` (NULL there: no live session),
// consented_scopes left for the caller. A session that signed in through an organization ends
// with the user's membership of it: removed or deactivated, the organization no longer vouches
// for the sign-in, so the browser signs in again (the grants of that membership are revoked
// with it: tokens/grant_revocation.h). Its status is read here, one more read for such a
// session only (every other session's read is the one statement it was), rather than the
// session revoked where memberships change (a library below this one): nullopt when it
// lapsed. A database failure is returned.
Result<std::optional<Session>> live_session(store::Db& db, const store::Row& row, size_t at);

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
  // cookie named, if any, is revoked: every sign-in gets a fresh token. `organization_id`: the
  // organization the sign-in went through, empty when none.
  Result<std::string> create(const std::string& user_id, int64_t auth_time,
                             const http::Request& request, int64_t now,
                             const std::string& organization_id = "");

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

  // The hash the request's session cookie is stored under; nullopt without a well-formed one
  // (nothing to look up).
  std::optional<std::string> presented_token_hash(const http::Request& request) const;

  const std::string& cookie_name() const { return cookie_name_; }
  // The Set-Cookie value that removes the cookie from the browser.
  std::string clearing_cookie() const;

  // Deletes sessions that expired or were revoked more than a day ago (a periodic task).
  static Status prune(store::Db& db, int64_t now);

 private:
  std::string cookie(const std::string& value, int64_t max_age) const;

  store::Db& db_;
  int64_t lifetime_seconds_;
  bool secure_;
  std::string cookie_name_;
};

}  // namespace portcullis::identity
