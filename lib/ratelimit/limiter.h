// Rate limits shared by every worker and node: fixed-window counters in the database (one
// upsert per request, which both counts and decides: one round trip). A bucket names what is
// limited ("dcr:ip:203.0.113.9", "token:client:dcr_…"); the window is aligned to multiples of its
// length.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::ratelimit {

struct Decision {
  bool allowed = true;
  int retry_after_seconds = 0;  // when refused: until the window ends
};

class Limiter {
 public:
  explicit Limiter(store::Db& db) : db_(db) {}

  // Counts one hit in `bucket` and says whether it is within `limit` per `window_seconds`.
  // limit 0 = unlimited (nothing is written). A database failure is returned as an error: the
  // caller decides whether to fail open or closed.
  Result<Decision> hit(const std::string& bucket, int limit, int window_seconds, int64_t now);

  // Deletes windows that ended before `now` (run from a periodic task).
  Status prune(int64_t now);

 private:
  store::Db& db_;
};

// The Status to return when a Decision refuses: 429 with Retry-After in every family; OAuth's
// `error` is temporarily_unavailable (contract §0).
Status too_many_requests(const Decision& decision, std::string what);

}  // namespace portcullis::ratelimit
