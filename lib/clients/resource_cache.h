// A worker's short memory of the resources that refreshes and code exchanges mint tokens for
// (issue 16): a sealed refresh token or code carries its resource's id but not its server URL,
// token lifetime and signing algorithm, and reading them every time would give back the round
// trip the sealed value saves.
//
// Why a stale entry changes no security outcome: a deleted resource revokes its grants in the
// same transaction (tokens/grant_revocation.h), and a refresh's rotation matches only a grant
// that is not revoked (tokens/grants.h), so a deleted resource's refresh fails with
// invalid_grant whatever this cache says; a code exchange's write requires the resource's row
// (sql/0096_code_exchange_one_statement.sql), and without it the exchange reads the store and
// answers as it does. An edit of a resource (its server URL, token lifetime or signing
// algorithm) reaches the tokens minted at most kTtlSeconds late, on each worker: the access
// tokens minted in between carry the values the resource had when it was cached, as tokens
// minted just before the edit do. Failures are never remembered.
//
// One per worker process (workers are single-threaded); nothing is shared between workers or
// nodes.
#pragma once

#include <cstdint>
#include <string>

#include "clients/resources.h"
#include "core/status.h"
#include "core/ttl_cache.h"
#include "store/db.h"

namespace portcullis::oauth {

class ResourceCache {
 public:
  static constexpr int64_t kTtlSeconds = 5;

  // This process's cache.
  static ResourceCache& of_this_worker();

  // The resource as read at most kTtlSeconds ago, else the store's (ResourceStore::get: NotFound
  // when it is gone, not remembered).
  Result<Resource> get(store::Db& db, const std::string& resource_id, int64_t now);

 private:
  TtlCache<Resource> entries_{kTtlSeconds, 10000};
};

}  // namespace portcullis::oauth
