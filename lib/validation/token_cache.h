// Verified tokens of one resource, remembered until they expire, so a client that sends the
// same token with every request pays for one signature check, not one per request. Keyed by the
// whole token (compared byte for byte: no hash collision can alias two tokens); a hit costs one
// string hash and no allocation. Only tokens that passed signature and claim checks are stored;
// scopes, DPoP proofs and the deny-list are still checked on every request.
//
// Bounded: when full it starts over (a flood of distinct valid tokens costs re-verification,
// never memory). Not thread-safe: one per worker process.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "validation/verdict.h"

namespace portcullis::validation {

class TokenCache {
 public:
  explicit TokenCache(size_t max_entries = 10000, int64_t leeway_seconds = 60)
      : max_entries_(max_entries), leeway_seconds_(leeway_seconds) {}

  // The claims of `token` when it was stored and has not expired by `now`; else nullptr (an
  // expired entry is dropped).
  std::shared_ptr<const AccessClaims> find(std::string_view token, int64_t now);
  // REQUIRES: claims of a token that verify_token accepted.
  void put(std::string_view token, std::shared_ptr<const AccessClaims> claims);
  size_t size() const { return entries_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  const size_t max_entries_;
  const int64_t leeway_seconds_;
  std::unordered_map<std::string, std::shared_ptr<const AccessClaims>, Hash, std::equal_to<>>
      entries_;
};

}  // namespace portcullis::validation
