// Authorization codes (contract §3): single-use, 60 seconds, bound to everything the
// authorization request settled. A resource's client gets a sealed code that is stored nowhere
// (sealed_code.h): sealed_code_for() below, and the exchange's read of what the code names
// (read_code_state, kCodeStateColumns). The admin portal's own sign-in (admin/portal_signin.h)
// gets a random code stored as a hash (CodeStore), which it claims itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "store/db.h"
#include "tokens/grants.h"
#include "tokens/sealed_code.h"

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

// A code of the table (the admin portal's): its binding and whether it was used.
struct StoredCode {
  CodeBinding binding;
  int64_t expires_at = 0;
  std::optional<int64_t> used_at;
};

// The sealed code of a binding (the login request's id and the nonce are not carried: nothing
// after the authorize reads them), for the grant `grant_id` its exchange will create.
SealedCode sealed_code_for(const CodeBinding& binding, std::string grant_id, int64_t now);

// What a code exchange reads about an opened sealed code, in the read of its client
// (ClientStore::find_with_code_state) or alone (read_code_state): whether the code's grant
// exists (the code was used: a replay), its user's `active` (nullopt: the user is gone) and its
// resource (nullopt: gone).
struct CodeState {
  bool used = false;
  std::optional<bool> user_active;
  std::optional<GrantResource> resource;
};
// The columns and joins of that read (three primary-key lookups, each with one parameter:
// code_state_params), to add to a read of one row.
inline constexpr const char* kCodeStateColumns =
    "g.id, u.active, r.id, r.server_url, r.access_token_ttl_seconds, r.access_token_signing_alg";
inline constexpr const char* kCodeStateJoins =
    "LEFT JOIN grants g ON g.id = ? LEFT JOIN users u ON u.id = ? LEFT JOIN resources r ON r.id "
    "= ?";
store::Params code_state_params(const SealedCode& code);
CodeState code_state_from_row(const store::Row& row, size_t first = 0);
Result<CodeState> read_code_state(store::Db& db, const SealedCode& code);

class CodeStore {
 public:
  explicit CodeStore(store::Db& db) : db_(db) {}

  // How a code is stored and looked up: its SHA-256.
  static std::string hash(const std::string& code);

  // Returns the code to hand to the client.
  Result<std::string> issue(const CodeBinding& binding, int64_t now);
  // The stored code, read without a lock. NotFound when unknown.
  Result<StoredCode> find(const std::string& code);
  // Marks the code used unless it already is: false when another redemption got there first.
  // Inside a transaction the row stays locked until it ends, so a concurrent one waits here
  // and then finds it used.
  Result<bool> claim(const std::string& code, int64_t now);
  Status prune(int64_t now);

 private:
  store::Db& db_;
};

}  // namespace portcullis::oauth
