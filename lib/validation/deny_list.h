// The revoked access tokens (contract §5: the `jti` deny-list) as a worker-local set, re-read
// from the store every `sync_interval_ms`. An access token is revoked when its jti is on the
// deny-list (one token revoked through /oauth/revoke) or when the grant its jti names
// (oauth/access_token.h) was revoked: code replay, refresh-token reuse, a revoked refresh token,
// a deactivated user, a deleted client or resource. A lookup is one hash-set probe, so the
// deny-list is consulted on every request, cached tokens included; a revocation takes effect in
// every worker within the sync interval (plus the time a worker may sit idle: the first request
// after an idle spell syncs before it is answered).
//
// Each sync reads only rows revoked since the previous one (the access_tokens_revoked and
// grants_revoked indexes), with a few seconds of overlap for rows committed late; entries leave
// the set once no token they cover can still be valid: a token at its expiry, a grant once the
// longest access-token lifetime has passed since its revocation. Not thread-safe: one per worker
// process.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/status.h"
#include "store/db.h"
#include "validation/verdict.h"

namespace portcullis::validation {

class DenyList {
 public:
  explicit DenyList(int64_t sync_interval_ms) : sync_interval_ms_(sync_interval_ms) {}

  // Syncs when the last sync is older than the interval. `now_ms` is a monotonic clock (for the
  // schedule), `now` Unix seconds (for the rows). On a store failure the old set stays and the
  // error is returned for logging; the next call retries.
  Status sync_if_due(store::Db& db, int64_t now_ms, int64_t now);
  bool revoked(std::string_view jti) const;
  // When the token `verdict` accepted is revoked, turns it into the refusal of a revoked token
  // (kInvalidToken, the same scheme, so a DPoP token gets the DPoP challenge) and returns true.
  bool refuse_if_revoked(Verdict& verdict) const;
  size_t size() const { return revoked_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  const int64_t sync_interval_ms_;
  bool synced_ = false;
  int64_t last_sync_ms_ = 0;
  int64_t since_ = 0;  // revoked_at of the next query (Unix seconds)
  std::unordered_map<std::string, int64_t, Hash, std::equal_to<>> revoked_;  // jti → exp
  // grant id → the time after which no access token of the grant can be valid
  std::unordered_map<std::string, int64_t, Hash, std::equal_to<>> revoked_grants_;
};

}  // namespace portcullis::validation
