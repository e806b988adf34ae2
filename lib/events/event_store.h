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
// the transaction that inserts them, EventStore::prune_before takes from it.
std::string count_scope(std::string_view type);
// The number of stored events of these types, from their counts.
Result<int64_t> count_of_types(store::Db& db, const std::vector<std::string>& types);

class EventStore {
 public:
  explicit EventStore(store::Db& db) : db_(db) {}

  // Inserts stamped events (ids and times set) in one multi-row INSERT and adds them to their
  // types' counts. Runs in the caller's transaction (the Recorder's).
  Status insert(std::span<const Event> events);

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
