// Stored authorization requests (table login_requests): the validated parameters of an
// /oauth/authorize call while the user signs in and consents. The browser carries only the id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::oauth {

inline constexpr int64_t kLoginRequestLifetimeSeconds = 600;

// An authorization request waiting for the user (table login_requests). Lives 10 minutes.
struct LoginRequest {
  std::string id;  // random, URL-safe: the `login_request_id` of the pages
  std::string client_id;
  std::string resource_id;
  std::string redirect_uri;
  std::vector<std::string> scopes;
  std::string state;
  std::string code_challenge;
  std::string nonce;
  std::string prompt;      // "", "none", "login", "consent"
  std::string login_hint;  // an e-mail address, may be empty
  // Enterprise SSO hints (contract §10): each may be empty; any of them, like a login_hint in
  // a domain with an SSO connection, sends the browser straight to the identity provider.
  std::string domain_hint;
  std::string organization_id;
  std::string connection_id;
  std::string dpop_jkt;  // RFC 9449 §10: the code will be bound to this DPoP key thumbprint
  std::string user_id;   // set once the user signed in
  int64_t auth_time = 0;
  // Set with the user: the organization the sign-in went through (oauth/signin_organization.h),
  // which the code and its tokens carry as org_id; empty when none. Never the hint above.
  std::string signin_organization_id;
  std::string csrf_token;  // every form of the flow carries it; compared in constant time
  int64_t expires_at = 0;
};

class LoginRequestStore {
 public:
  explicit LoginRequestStore(store::Db& db) : db_(db) {}

  // Assigns the id, CSRF token and expiry, and stores it.
  Status create(LoginRequest& request, int64_t now);
  // NotFound when unknown, completed or expired.
  Result<LoginRequest> get(const std::string& id, int64_t now);
  Status attach_user(const std::string& id, const std::string& user_id, int64_t auth_time,
                     const std::string& signin_organization_id);
  // Completes it: it can never be used again. FailedPrecondition when it already was (a
  // double-submitted consent form must not mint two codes).
  Status complete(const std::string& id, int64_t now);
  Status prune(int64_t now);

 private:
  store::Db& db_;
};

}  // namespace portcullis::oauth
