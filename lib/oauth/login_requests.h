// Stored authorization requests (table login_requests): the validated parameters of an
// /oauth/authorize call while the user signs in and consents. The browser carries only the id.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "oauth/login_flow.h"
#include "store/db.h"

namespace portcullis::oauth {

inline constexpr int64_t kLoginRequestLifetimeSeconds = 600;

class LoginRequestStore {
 public:
  explicit LoginRequestStore(store::Db& db) : db_(db) {}

  // Assigns the id, CSRF token and expiry, and stores it.
  Status create(LoginRequest& request, int64_t now);
  // NotFound when unknown, completed or expired.
  Result<LoginRequest> get(const std::string& id, int64_t now);
  Status attach_user(const std::string& id, const std::string& user_id, int64_t auth_time);
  // Completes it: it can never be used again. FailedPrecondition when it already was (a
  // double-submitted consent form must not mint two codes).
  Status complete(const std::string& id, int64_t now);
  Status prune(int64_t now);

 private:
  store::Db& db_;
};

}  // namespace portcullis::oauth
