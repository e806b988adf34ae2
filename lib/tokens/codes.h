// Authorization codes (contract §3): random, single-use, 60 seconds, stored only as a hash and
// bound to everything the authorization request settled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::oauth {

inline constexpr int64_t kCodeLifetimeSeconds = 60;

struct CodeBinding {
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
};

class CodeStore {
 public:
  explicit CodeStore(store::Db& db) : db_(db) {}

  // Returns the code to hand to the client.
  Result<std::string> issue(const CodeBinding& binding, int64_t now);
  // The stored code, locked for the rest of the caller's transaction. NotFound when unknown.
  // REQUIRES: inside Db::transaction.
  Result<StoredCode> lock(const std::string& code);
  Status mark_used(const std::string& code, const std::string& grant_id, int64_t now);
  Status prune(int64_t now);

 private:
  store::Db& db_;
};

}  // namespace portcullis::oauth
