#include "validation/deny_list.h"

namespace portcullis::validation {
namespace {

// Rows are stamped with the revoking worker's clock and may commit a little after: read that
// far back every time (re-reading a row is harmless).
constexpr int64_t kOverlapSeconds = 5;

}  // namespace

Status DenyList::sync_if_due(store::Db& db, int64_t now_ms, int64_t now) {
  if (synced_ && now_ms - last_sync_ms_ < sync_interval_ms_) return Status::ok();
  last_sync_ms_ = now_ms;  // a failing store is retried on schedule, not on every request
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db.query("SELECT jti, expires_at FROM access_tokens WHERE revoked_at >= ? AND "
               "expires_at > ?",
               {since_, now - 60}));
  for (const auto& row : rows) revoked_.insert_or_assign(row.str(0), row.i64(1));
  // Forget tokens that expired (with the validators' skew allowance) long enough ago.
  for (auto it = revoked_.begin(); it != revoked_.end();) {
    it = it->second + 60 < now ? revoked_.erase(it) : std::next(it);
  }
  since_ = now - kOverlapSeconds;
  synced_ = true;
  return Status::ok();
}

bool DenyList::revoked(std::string_view jti) const {
  return revoked_.find(jti) != revoked_.end();
}

}  // namespace portcullis::validation
