#include "events/recorder.h"

#include <span>

#include "core/ids.h"
#include "core/time.h"
#include "events/delivery_store.h"
#include "events/event_store.h"
#include "log/log.h"

namespace portcullis::events {
namespace {

constexpr size_t kMaxPending = 10000;

// Logs what the registry does not declare: an undeclared type, or a data member its type does
// not list. Cheap: a short scan of a few words per member.
void check_declared(const Event& event) {
  const EventType* type = find_type(event.type);
  if (!type) {
    log::error("event of an undeclared type recorded", {{"type", event.type}});
    return;
  }
  if (!event.data.isObject()) return;
  for (const std::string& member : event.data.getMemberNames()) {
    if (!type->declares(member)) {
      log::error("event data member not declared for its type",
                 {{"type", event.type}, {"member", member}});
    }
  }
}

}  // namespace

Event Event::of(const EventType& type, Subjects subjects) {
  Event e;
  e.type = std::string(type.name);
  e.organization_id = std::move(subjects.organization_id);
  e.user_id = std::move(subjects.user_id);
  e.resource_id = std::move(subjects.resource_id);
  e.client_id = std::move(subjects.client_id);
  return e;
}

void Recorder::stamp(Event& event) {
  check_declared(event);
  event.id = new_id("evt_");
  event.occurred_at = db_now();
}

void Recorder::add(Event event) {
  if (pending_.empty()) oldest_ = std::chrono::steady_clock::now();
  stamp(event);
  pending_.push_back(std::move(event));
}

Status Recorder::insert(store::Db& db, size_t begin, size_t end) const {
  const std::span<const Event> batch(pending_.data() + begin, end - begin);
  store::Params ids;
  for (const Event& e : batch) ids.emplace_back(e.id);
  // The transactional outbox: the events and their deliveries to every enabled webhook endpoint
  // whose filter takes them are inserted in one transaction, so an event is never written
  // without its deliveries (nor the other way round).
  return db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(EventStore(db).insert(batch));
    return DeliveryStore(db).enqueue(ids);
  });
}

Status Recorder::write_since(store::Db& db, size_t mark) {
  for (size_t begin = mark; begin < pending_.size(); begin += kRowsPerInsert) {
    PORTCULLIS_RETURN_IF_ERROR(
        insert(db, begin, std::min(pending_.size(), begin + kRowsPerInsert)));
  }
  truncate(mark);
  return Status::ok();
}

Status Recorder::flush(store::Db& db) {
  while (!pending_.empty()) {
    size_t n = std::min(pending_.size(), kRowsPerInsert);
    Status st = insert(db, 0, n);
    // Ids are fixed when an event is added, so a batch whose COMMIT did happen before the
    // connection failed (an unknown outcome) comes back as a duplicate: it is written, with
    // its deliveries (one transaction).
    if (st.code() == Code::kAlreadyExists) st = Status::ok();
    if (!st.is_ok()) {
      if (pending_.size() > kMaxPending) {
        log::error("dropping events after repeated store failures",
                   {{"dropped", static_cast<long long>(pending_.size() - kMaxPending)}});
        pending_.erase(pending_.begin(),
                       pending_.begin() + static_cast<long>(pending_.size() - kMaxPending));
      }
      return st;
    }
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<long>(n));
  }
  return Status::ok();
}

}  // namespace portcullis::events
