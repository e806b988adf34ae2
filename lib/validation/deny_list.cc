#include "validation/deny_list.h"

#include <optional>

#include "tokens/access_token.h"
#include "tokens/grant_revocation.h"

namespace portcullis::validation {
namespace {

// Rows are stamped with the revoking worker's clock and may commit a little after: read that
// far back every time (re-reading a row is harmless).
constexpr int64_t kOverlapSeconds = 5;
// No access token lives longer (access_token_ttl_seconds is at most 86400), and validators
// allow 60 s of clock skew; revoked grant rows live at least this long (grant_revocation.h).
constexpr int64_t kLongestTokenSeconds = oauth::kRevokedGrantRetentionSeconds;

template <typename Map>
void forget_before(Map& entries, int64_t now) {
  for (auto it = entries.begin(); it != entries.end();) {
    it = it->second < now ? entries.erase(it) : std::next(it);
  }
}

}  // namespace

Status DenyList::sync_if_due(store::Db& db, int64_t now_ms, int64_t now) {
  if (synced_ && now_ms - last_sync_ms_ < sync_interval_ms_) return Status::ok();
  last_sync_ms_ = now_ms;  // a failing store is retried on schedule, not on every request
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db.query("SELECT jti, expires_at FROM access_tokens WHERE revoked_at >= ? AND "
               "expires_at > ?",
               {since_, now - 60}));
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows grants,
      db.query("SELECT id, revoked_at FROM grants WHERE revoked_at >= ? AND revoked_at > ?",
               {since_, now - kLongestTokenSeconds}));
  // The skew allowance is added so that an entry outlives every validator's view of the token.
  for (const auto& row : rows) revoked_.insert_or_assign(row.str(0), row.i64(1) + 60);
  for (const auto& row : grants) {
    revoked_grants_.insert_or_assign(row.str(0), row.i64(1) + kLongestTokenSeconds);
  }
  forget_before(revoked_, now);
  forget_before(revoked_grants_, now);
  since_ = now - kOverlapSeconds;
  synced_ = true;
  return Status::ok();
}

bool DenyList::refuse_if_revoked(Verdict& verdict) const {
  if (!verdict.claims || !revoked(verdict.claims->jti)) return false;
  const TokenScheme scheme = verdict.scheme;
  verdict = Verdict::refuse(Outcome::kInvalidToken, "token has been revoked");
  verdict.scheme = scheme;
  return true;
}

bool DenyList::revoked(std::string_view jti) const {
  if (revoked_.find(jti) != revoked_.end()) return true;
  const std::optional<std::string_view> grant = oauth::grant_of_jti(jti);
  return grant && revoked_grants_.find(*grant) != revoked_grants_.end();
}

}  // namespace portcullis::validation
