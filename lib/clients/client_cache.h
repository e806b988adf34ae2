// A worker's short memory of the clients that authenticate at the token endpoint, for its hot
// paths: the refresh grant, and the code exchange of a registered client decided without a read
// (oauth/token_grants.h): the client lookup, the JSON of its stored metadata, or a CIMD
// document's re-validation would otherwise be paid on every one.
//
// Why a stale entry changes no security outcome: registered clients are never edited, only
// deleted, and deleting one revokes its grants in the same transaction; a refresh's rotation
// refuses a revoked grant, so a deleted client's refresh fails with invalid_grant whatever this
// cache says; a code exchange's write requires the client's row
// (sql/0096_code_exchange_one_statement.sql), and without it the exchange reads the client
// from the store and answers invalid_client. CIMD documents are cached in the store for at
// least five minutes anyway; this adds at most kTtlSeconds to that (refreshes only: a CIMD
// client's code exchange reads the store). Failures are never remembered.
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
