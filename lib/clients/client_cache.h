// A worker's short memory of the clients that authenticate at the token endpoint, for the
// refresh grant only (its hot path): the client lookup, the JSON of its stored metadata, or a
// CIMD document's re-validation would otherwise be paid on every refresh.
//
// Why a stale entry changes no security outcome: registered clients are never edited, only
// deleted, and deleting one revokes its grants in the same transaction; a refresh reads its
// grant from the store every time, so a deleted client's refresh fails with invalid_grant
// whatever this cache says. CIMD documents are cached in the store for at least five minutes
// anyway; this adds at most kTtlSeconds to that. Failures are never remembered.
//
// One per worker process (workers are single-threaded); nothing is shared between workers or
// nodes.
#pragma once

#include <cstdint>
#include <string>

#include "clients/clients.h"
#include "core/ttl_cache.h"

namespace portcullis::oauth {

class ClientCache {
 public:
  static constexpr int64_t kTtlSeconds = 30;
  static constexpr size_t kMaxEntries = 10000;

  // This process's cache.
  static ClientCache& of_this_worker();

  // nullptr when absent or older than kTtlSeconds.
  const AuthenticatableClient* find(const std::string& client_id, int64_t now) const;
  void put(const AuthenticatableClient& client, int64_t now);
  void clear() { entries_.clear(); }

 private:
  TtlCache<AuthenticatableClient> entries_{kTtlSeconds, kMaxEntries};
};

}  // namespace portcullis::oauth
