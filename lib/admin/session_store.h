// The admin portal's sessions (table `admin_sessions`), separate from the sign-in pages'
// browser sessions: shorter, with an idle timeout, ended by the portal's sign-out. The cookie
// holds a random 256-bit token; only its SHA-256 is stored. Cookie attributes:
//
//   https base URL:  __Host-portcullis_admin=…; Path=/; Secure; HttpOnly; SameSite=Lax
//   http (local):    portcullis_admin=…; Path=/; HttpOnly; SameSite=Lax
//
// (`__Host-` needs Secure, which a browser refuses over the local plain-http loopback stack.)
// A session cookie (no Max-Age): closing the browser ends it too. The CSRF token of the
// session's forms is derived from the cookie's token, so the database alone cannot forge it.
//
// This is the only writer of `admin_sessions`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/config.h"
#include "core/status.h"
#include "http/request.h"
#include "store/db.h"

namespace portcullis::admin {

struct AdminSession {
  std::string user_id;
  int64_t auth_time = 0;
  int64_t created_at = 0;
  int64_t expires_at = 0;  // the absolute timeout
  std::string csrf_token;  // every form of the portal carries it
};

class SessionStore {
 public:
  SessionStore(store::Db& db, const config::Config& config);

  // The session the request's cookie names: unexpired (absolute and idle timeouts), not signed
  // out, of an active user; nullopt otherwise. Refreshes its idle clock (at most once a minute,
  // so a page view does not always write).
  std::optional<AdminSession> current(const http::Request& request, int64_t now);

  // Starts a session for `user_id`; returns the Set-Cookie header value. A session the
  // request's cookie named is ended first.
  Result<std::string> create(const std::string& user_id, int64_t auth_time,
                             const http::Request& request, int64_t now);
  // Sign-out: ends the session the request's cookie names (nothing when there is none).
  Status end(const http::Request& request, int64_t now);
  // Ends every portal session of a user (a user whose sessions an admin revoked).
  Status end_all_for_user(const std::string& user_id, int64_t now);

  const std::string& cookie_name() const { return cookie_name_; }
  std::string clearing_cookie() const;
  bool secure() const { return secure_; }

  // Deletes sessions that ended more than a day ago (a periodic task).
  static Status prune(store::Db& db, int64_t now);

 private:
  std::optional<std::string> presented_token(const http::Request& request) const;

  store::Db& db_;
  int64_t idle_seconds_;
  int64_t lifetime_seconds_;
  bool secure_;
  std::string cookie_name_;
};

}  // namespace portcullis::admin
