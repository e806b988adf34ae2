// The audit trail (contract §11): the only writer of the `events` table. The Recorder
// (recorder.h) inserts its batches through it; it serves the events listing (GET
// /api/v1/events), the per-user scope access log (GET /api/v1/users/{id}/access) and retention.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/rfc3339.h"
#include "core/status.h"
#include "events/event.h"
#include "http/request.h"
#include "paging/keyset.h"
#include "store/db.h"

namespace portcullis::events {

// The filters of GET /api/v1/events, each optional; together they are ANDed.
struct EventFilter {
  std::vector<std::string> types;  // declared types only
  std::string user_id;
  std::string organization_id;
  std::string resource_id;
  std::string client_id;
  std::string start_time;  // DATETIME(6) text, inclusive
  std::string end_time;    // DATETIME(6) text, exclusive
};

// The filters from a query string: InvalidArgument for an unknown type, a malformed id or time,
// a repeated parameter, or start_time not before end_time.
Result<EventFilter> parse_event_filter(const http::Form& query);

using portcullis::rfc3339_to_db_time;  // core/rfc3339.h

// The paging listing a filter's tokens are bound to.
paging::Listing event_listing(const EventFilter& filter);

// An event row as the API shows it (contract §11).
Json::Value event_json(const store::Row& row);

// The listing_counts scope (paging/counter.h) of one type's events: the Recorder adds to it in
// the transaction that inserts them, EventStore::fan_out when it fans marked events out
// (event_outbox, below), EventStore::prune_before takes from it.
std::string count_scope(std::string_view type);
// The number of stored events of these types: their counts plus the events marked in
// event_outbox that are not counted yet (one statement, so a fan-out moving events from one to
// the other is never seen half done).
Result<int64_t> count_of_types(store::Db& db, const std::vector<std::string>& types);

// A stamped event's row of `events` as ten values, in the column order of EventStore::insert and
// of the stored procedure portcullis_record_event (sql/0090_event_outbox.sql): id, type,
// occurred_at, organization_id, user_id, resource_id, client_id, ip, user_agent, data.
store::Params event_row(const Event& event);
// The CALL of portcullis_record_event: event_row()'s ten values, then a refresh token's five
// (token_hash, grant_id, parent_hash, create_time, expires_at; all NULL for none), which only
// the refresh tokens' store (lib/tokens/grants.cc) passes.
inline constexpr const char* kRecordEventCall =
    "CALL portcullis_record_event(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

class EventStore {
 public:
  explicit EventStore(store::Db& db) : db_(db) {}

  // Inserts stamped events (ids and times set) in one multi-row INSERT and adds them to their
  // types' counts. Runs in the caller's transaction (the Recorder's).
  Status insert(std::span<const Event> events);

  // The transactional outbox of the hot path (docs/events.md, "Recording"): writes one stamped
  // event and its mark in event_outbox in one round trip (CALL portcullis_record_event), in the
  // caller's transaction when there is one (the change the event describes), in one of its own
  // otherwise. Its deliveries and its type's count are left to fan_out().
  Status record(const Event& event);

  // Fans out up to `batch` marked events (oldest first), in one transaction: claims their marks
  // with SELECT … FOR UPDATE SKIP LOCKED (several delivery processes may run), queues their
  // webhook deliveries (DeliveryStore::enqueue), adds them to their types' counts and deletes
  // the marks. Returns how many. Run by the delivery process (portcullis-webhooks).
  Result<int64_t> fan_out(int64_t batch);

  // Newest first, keyset pages (contract §8); rows for event_json().
  Result<paging::Page<store::Row>> list(const EventFilter& filter,
                                        const paging::PageRequest& request,
                                        const paging::TokenCodec& codec);

  // The user's access log: per (resource, scope), when it was granted, last used, how many
  // validations and the last failure, from the user's newest `max_events` consent, token and
  // validation events. {"user_id","access":[…]}.
  Result<Json::Value> user_access(const std::string& user_id, int max_events = 20000);

  // Deletes events that occurred before `cutoff` (DATETIME text), `batch` rows per statement
  // (each its own short transaction), until none are left; returns how many.
  Result<int64_t> prune_before(const std::string& cutoff, int batch = 1000);

 private:
  store::Db& db_;
};

}  // namespace portcullis::events
