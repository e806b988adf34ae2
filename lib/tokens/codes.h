// Authorization codes (contract §3): random, single-use, 60 seconds, stored only as a hash and
// bound to everything the authorization request settled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "store/db.h"
#include "tokens/grants.h"

namespace portcullis::oauth {

inline constexpr int64_t kCodeLifetimeSeconds = 60;

struct CodeBinding {
  // The login request the code completed; empty when none was stored (a signed-in browser
  // whose remembered consent covered the request, handlers/oauth/authorization.cc).
  std::string login_request_id;
  std::string client_id;
  std::string resource_id;
  std::string redirect_uri;
  std::string code_challenge;
  std::string scope;  // space-separated
  std::string user_id;
  int64_t auth_time = 0;
  std::string organization_id;
  std::string nonce;
  std::string dpop_jkt;  // RFC 9449 §10: redeemable only with a proof made with this key
};

struct StoredCode {
  CodeBinding binding;
  int64_t expires_at = 0;
  std::optional<int64_t> used_at;
  std::string grant_id;  // the grant its first use created (to revoke on replay)
  // Read in the same statement, for the exchange: the user's `active` (nullopt: the user is
  // gone) and the resource (nullopt: it is gone).
  std::optional<bool> user_active;
  std::optional<GrantResource> resource;
};

class CodeStore {
 public:
  explicit CodeStore(store::Db& db) : db_(db) {}

  // How a code is stored and looked up: its SHA-256.
  static std::string hash(const std::string& code);

  // Returns the code to hand to the client.
  Result<std::string> issue(const CodeBinding& binding, int64_t now);
  // The stored code with its user's state and its resource, in one read without a lock (the
  // exchange's first round trip). NotFound when unknown.
  Result<StoredCode> find(const std::string& code);
  // Marks the code used by `grant_id` unless it already is: false when another exchange got
  // there first (a replay). Inside the exchange's transaction the row stays locked until it ends,
  // so a concurrent exchange waits here and then finds it used.
  Result<bool> claim(const std::string& code, const std::string& grant_id, int64_t now);
  Status prune(int64_t now);

 private:
  store::Db& db_;
};

}  // namespace portcullis::oauth
