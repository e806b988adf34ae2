#include "ratelimit/limiter.h"

namespace portcullis::ratelimit {

Result<Decision> Limiter::hit(const std::string& bucket, int limit, int window_seconds,
                              int64_t now) {
  if (limit <= 0 || window_seconds <= 0) return Decision{};
  int64_t window_start = now - now % window_seconds;
  // One round trip decides and counts: the affected-rows count says which case happened —
  // 1 the window's first hit (inserted), 2 a hit under the limit (counted), 0 the window is
  // full (left as it is: refused hits are not counted, so the row never outgrows the limit).
  // This needs the server's "changed" count, not "matched" (store/db.h: no CLIENT_FOUND_ROWS).
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t changed,
      db_.execute("INSERT INTO rate_limit_counters (bucket, window_start, hits) VALUES (?, ?, 1) "
                  "ON DUPLICATE KEY UPDATE hits = IF(hits < ?, hits + 1, hits)",
                  {bucket.substr(0, 255), window_start, static_cast<int64_t>(limit)}));
  const bool allowed = changed != 0;
  Decision d;
  d.allowed = allowed;
  if (!d.allowed) d.retry_after_seconds = static_cast<int>(window_start + window_seconds - now);
  if (d.retry_after_seconds < 1 && !d.allowed) d.retry_after_seconds = 1;
  return d;
}

Status Limiter::prune(int64_t now) {
  // Windows are at most a day long; anything older than that has ended.
  return db_.execute("DELETE FROM rate_limit_counters WHERE window_start < ?", {now - 86400})
      .status();
}

Status too_many_requests(const Decision& decision, std::string what) {
  return Status::resource_exhausted("too many " + what + "; retry after " +
                                    std::to_string(decision.retry_after_seconds) + " s")
      .with_reason("temporarily_unavailable")
      .with_retry_after(decision.retry_after_seconds);
}

}  // namespace portcullis::ratelimit
