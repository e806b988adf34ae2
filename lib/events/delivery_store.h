// The webhook outbox (docs/events.md): the only writer of `webhook_deliveries` and
// `webhook_attempts`. It lives beside the events because the Recorder writes the outbox rows in
// the transaction of the events (and so of the change they describe); the delivery process
// (lib/webhooks/delivery.h) claims, records and reschedules them here, and a replay
// (lib/webhooks/webhook_store.h) queues them again here.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "paging/keyset.h"
#include "store/db.h"

namespace portcullis::events {

// One HTTP attempt of a delivery, as webhook_attempts keeps it.
struct AttemptRow {
  std::string delivery_id;
  int64_t attempt = 0;       // 1 for the first
  store::Value status_code;  // NULL: no response
  int64_t latency_ms = 0;
  store::Value error;    // NULL on a response
  store::Value excerpt;  // NULL when the answer was empty
};

// The delivery log of one endpoint (GET /api/v1/webhooks/{id}/deliveries and the admin
// portal), newest first: {"id","event_id","state","attempts","last_status","last_error",
// "next_attempt_time" (pending only),"attempt_log":[{"attempt","attempted_at","status_code",
// "latency_ms","error","response_excerpt"}]}, absent members left out.
paging::Listing deliveries_listing(const std::string& webhook_id);
Result<paging::Page<Json::Value>> list_deliveries(store::Db& db, const std::string& webhook_id,
                                                  const paging::PageRequest& request,
                                                  const paging::TokenCodec& codec);

class DeliveryStore {
 public:
  explicit DeliveryStore(store::Db& db) : db_(db) {}

  // The transactional outbox: a pending delivery of each of these events (ids, already
  // inserted in the caller's transaction) to every enabled endpoint whose filter takes it. The
  // delivery's id (the webhook-id) is derived from the event and the endpoint: stable.
  Status enqueue(store::Params event_ids);

  // Claims up to `batch` due pending deliveries for `claim` (SELECT … FOR UPDATE SKIP LOCKED in
  // a short transaction) and leases them for `lease_seconds`; returns their ids.
  Result<std::vector<std::string>> claim(const std::string& claim, int64_t lease_seconds,
                                         int64_t batch);
  // The claimed deliveries whose endpoint was disabled since they were queued: failed.
  Status fail_disabled(const std::string& claim, const std::vector<std::string>& ids);
  // A claimed delivery held back (an earlier one of its endpoint failed): due at `due_at`.
  Status release(const std::string& claim, const std::string& id, const std::string& due_at);
  // A claimed delivery whose retry schedule is exhausted: failed.
  Status give_up(const std::string& claim, const std::string& id, int64_t attempts,
                 const store::Value& status, const std::string& last_error);
  // A claimed delivery that failed: due again in `delay_ms`; returns when (DATETIME text).
  Result<std::string> retry_later(const std::string& claim, const std::string& id, int64_t attempts,
                                  const store::Value& status, const std::string& last_error,
                                  int64_t delay_ms);
  // Claimed deliveries that got this 2xx `status`: delivered.
  Status mark_delivered(const std::string& claim, int64_t status,
                        const std::vector<std::string>& ids);
  // Every attempt of a round, in one INSERT.
  Status record_attempts(const std::vector<AttemptRow>& attempts);

  // Replay: one delivery of endpoint `webhook_id` queued again as new (attempts 0, due now);
  // NotFound when the endpoint has no such delivery.
  Status requeue(const std::string& webhook_id, const std::string& delivery_id);
  // Replay since `since` (DATETIME text): the endpoint's deliveries of events since then queued
  // again, the missing ones (events its filter takes that it has no delivery of) created.
  // Returns how many; call it inside a transaction.
  Result<int64_t> requeue_since(const std::string& webhook_id, const std::string& since);

 private:
  store::Db& db_;
};

}  // namespace portcullis::events
