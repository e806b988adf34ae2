// token.validated / token.validation_failed events (contract §11: the per-user, per-scope
// access log) for a validator that answers many requests a second, without a database write per
// request: identical outcomes (same resource, user, client, scopes required and granted, result)
// are counted in memory and written as one event with `data.count` once per flush interval, in
// the pipeline's event phase (after a response has left).
//
//   token.validated        user_id, client_id, organization_id, resource_id; data:
//                          scopes_required, scopes_granted, result ("allowed" |
//                          "insufficient_scope"), token_type, count
//   token.validation_failed resource_id; data: reason ("no_token" | "invalid_token" |
//                          "revoked" | "unavailable"), scopes_required, count
//
// Not thread-safe: one per worker process.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "events/recorder.h"
#include "validation/verdict.h"

namespace portcullis::validation {

class ValidationEvents {
 public:
  // flush_interval_ms 0: nothing is recorded (PORTCULLIS_VALIDATOR_EVENT_FLUSH_MS=0, for
  // measuring what the log costs: bench/mcp-validator; the per-user access log is then empty).
  explicit ValidationEvents(int64_t flush_interval_ms, size_t max_pending = 1000)
      : flush_interval_ms_(flush_interval_ms), max_pending_(max_pending) {}

  // `failure_reason` overrides the reason derived from the verdict ("revoked").
  void record(const Verdict& verdict, std::string_view resource_id,
              std::string_view required_scopes, std::string_view ip, std::string_view user_agent,
              std::string_view failure_reason = {});
  // Moves the pending events into `recorder` when the interval has passed since the last drain
  // (or too many are pending); the caller's event phase writes them.
  void drain_if_due(events::Recorder& recorder, int64_t now_ms);
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    events::Event event;
    int64_t count = 0;
  };
  const int64_t flush_interval_ms_;
  const size_t max_pending_;
  int64_t last_drain_ms_ = -1;
  std::map<std::string, Pending, std::less<>> pending_;
  std::string key_;  // reused between calls: no allocation once it has grown
};

}  // namespace portcullis::validation
