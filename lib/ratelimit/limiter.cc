#include "ratelimit/limiter.h"

namespace portcullis::ratelimit {

Result<Decision> Limiter::hit(const std::string& bucket, int limit, int window_seconds,
                              int64_t now) {
  if (limit <= 0 || window_seconds <= 0) return Decision{};
  int64_t window_start = now - now % window_seconds;
  // One statement counts and reads back atomically; LAST_INSERT_ID(expr) carries the new count
  // out of the upsert without a second round trip racing other workers.
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("INSERT INTO rate_limit_counters (bucket, window_start, hits) VALUES (?, ?, "
                  "LAST_INSERT_ID(1)) ON DUPLICATE KEY UPDATE hits = LAST_INSERT_ID(hits + 1)",
                  {bucket.substr(0, 255), window_start})
          .status());
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query("SELECT LAST_INSERT_ID()"));
  int64_t hits = rows.empty() ? 0 : rows[0].i64(0);
  Decision d;
  d.allowed = hits <= limit;
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
