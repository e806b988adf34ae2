// Audit events (contract §11). Handlers add events to the worker's Recorder while they work.
// A management API or SCIM write's are written before its transaction commits (write_since);
// the others — events that describe no change, such as a refused sign-in — are written by the
// pipeline in multi-row INSERTs after the response has been sent (the "event" phase), batched
// across requests (server/app.h says when). The oauth and sso workers' events that describe a
// change do not come here: they are written with the change (EventStore::record, docs/events.md).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/status.h"
#include "events/event.h"
#include "events/types.h"
#include "store/db.h"

namespace portcullis::events {

class Recorder {
 public:
  static constexpr size_t kRowsPerInsert = 100;

  // Checks an event against the registry (below) and gives it its id and time, once: an event
  // written now rather than queued (EventStore::record, the hot path's outbox) is stamped so.
  static void stamp(Event& event);
  // Stamps and queues an event. Its type must be declared (types.def) and its data members
  // declared for that type: anything else is logged as a programming error (and still kept).
  void add(Event event);
  bool empty() const { return pending_.empty(); }
  size_t size() const { return pending_.size(); }
  // True when `rows` events are pending or the oldest has waited `age`.
  bool due(size_t rows, std::chrono::milliseconds age) const {
    return !pending_.empty() &&
           (pending_.size() >= rows || std::chrono::steady_clock::now() - oldest_ >= age);
  }
  // Drops the events added after the first `mark` (those of a change that was rolled back).
  void truncate(size_t mark) {
    if (mark < pending_.size()) pending_.resize(mark);
  }
  // Writes the events added after the first `mark`, with their webhook deliveries, and takes
  // them out of the batch. Called inside the transaction of the change they describe
  // (server::App runs management API and SCIM writes that way), it joins it: the change, its
  // events and its outbox rows commit together or not at all.
  Status write_since(store::Db& db, size_t mark);
  // Writes every pending event and clears the batch. On a
  // database failure the events are kept for the next flush, up to a bound, then dropped with
  // a log line: an outage must not grow a worker's memory without limit.
  Status flush(store::Db& db);

 private:
  // Inserts pending_[begin, end) and their deliveries in one transaction.
  Status insert(store::Db& db, size_t begin, size_t end) const;

  std::vector<Event> pending_;
  std::chrono::steady_clock::time_point oldest_;
};

}  // namespace portcullis::events
