// Grants and the tokens that hang off them (contract §4, §5).
//
// A grant is created by the first use of an authorization code. Refresh tokens rotate on every
// use; the rotated-out ones stay on record so that presenting one again is recognised as reuse
// and revokes the whole grant. Access tokens are JWTs, but each jti is recorded with its grant,
// so revoking a grant (code replay, refresh reuse, revocation, a deactivated user) also puts
// every live access token of it on the deny-list that introspection and validators consult.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::oauth {

struct Grant {
  std::string id;  // grt_…
  std::string user_id;
  std::string client_id;
  std::string resource_id;
  std::string scope;
  int64_t auth_time = 0;
  std::string organization_id;
  int64_t absolute_expires_at = 0;
  std::optional<int64_t> revoked_at;
  std::string dpop_jkt;  // non-empty: refresh needs a DPoP proof with this key (RFC 9449 §5)
};

struct LockedRefreshToken {
  Grant grant;
  int64_t expires_at = 0;  // idle expiry of this token
  std::optional<int64_t> rotated_at;
};

class GrantStore {
 public:
  explicit GrantStore(store::Db& db) : db_(db) {}

  // Assigns the id.
  Status create(Grant& grant);
  Result<Grant> get(const std::string& grant_id);
  // A new refresh token for the grant, idle-expiring after `idle_seconds` (never after the
  // grant's absolute expiry).
  Result<std::string> issue_refresh_token(const Grant& grant, int64_t now, int64_t idle_seconds);
  // REQUIRES: inside Db::transaction. NotFound when unknown.
  Result<LockedRefreshToken> lock_refresh_token(const std::string& token);
  Status mark_rotated(const std::string& token, int64_t now);
  // Revokes the grant and every access token issued under it. Idempotent.
  Status revoke(const std::string& grant_id, const std::string& reason, int64_t now);
  // Revokes every grant of a user (deactivation, deletion).
  Status revoke_all_for_user(const std::string& user_id, const std::string& reason, int64_t now);

  Status record_access_token(const std::string& jti, const std::string& grant_id,
                             int64_t expires_at);
  // Puts one access token on the deny-list until it expires.
  Status revoke_access_token(const std::string& jti, int64_t expires_at, int64_t now);
  Result<bool> is_access_token_revoked(const std::string& jti);

  Status prune(int64_t now);

 private:
  store::Db& db_;
};

}  // namespace portcullis::oauth
