#include "events/recorder.h"

#include <map>
#include <string_view>

#include "core/ids.h"
#include "core/time.h"
#include "events/event_store.h"
#include "format/json.h"
#include "log/log.h"
#include "paging/counter.h"

namespace portcullis::events {
namespace {

constexpr size_t kMaxPending = 10000;

store::Value optional_text(const std::string& s) {
  if (s.empty()) return nullptr;
  return s;
}

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

void Recorder::add(Event event) {
  check_declared(event);
  if (pending_.empty()) oldest_ = std::chrono::steady_clock::now();
  event.id = new_id("evt_");
  event.occurred_at = db_now();
  pending_.push_back(std::move(event));
}

Status Recorder::insert(store::Db& db, size_t begin, size_t end) const {
  std::string sql =
      "INSERT INTO events (id, type, occurred_at, organization_id, user_id, resource_id, "
      "client_id, ip, user_agent, data) VALUES ";
  // The transactional outbox: the deliveries of these events to every enabled webhook endpoint
  // whose filter takes them are inserted in the same transaction as the events, so an event is
  // never written without its deliveries (nor the other way round). The webhook-id (the
  // delivery's id) is derived from the event and the endpoint: stable.
  std::string outbox =
      "INSERT INTO webhook_deliveries (id, webhook_id, event_id, state, attempts, "
      "next_attempt_at, create_time, update_time) "
      "SELECT CONCAT('msg_', SUBSTRING(e.id, 5), '_', SUBSTRING(w.id, 4)), w.id, e.id, "
      "'pending', 0, e.occurred_at, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) "
      "FROM events e JOIN webhooks w ON w.enabled = 1 AND (JSON_LENGTH(w.event_types) = 0 "
      "OR JSON_CONTAINS(w.event_types, JSON_QUOTE(e.type))) WHERE e.id IN (";
  store::Params params, ids;
  for (size_t i = begin; i < end; ++i) {
    const Event& e = pending_[i];
    if (i > begin) sql += ", ", outbox += ", ";
    sql += "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    outbox += "?";
    ids.emplace_back(e.id);
    params.emplace_back(e.id);
    params.emplace_back(e.type);
    params.emplace_back(e.occurred_at);
    params.push_back(optional_text(e.organization_id));
    params.push_back(optional_text(e.user_id));
    params.push_back(optional_text(e.resource_id));
    params.push_back(optional_text(e.client_id));
    params.push_back(optional_text(e.ip));
    params.push_back(optional_text(e.user_agent.substr(0, 512)));
    params.emplace_back(json::write(e.data));
  }
  outbox += ")";
  // Each type's count (total_size of GET /api/v1/events) moves in the same transaction.
  std::map<std::string_view, std::pair<std::string_view, int64_t>> by_type;  // → (an id, count)
  for (size_t i = begin; i < end; ++i) {
    auto& [id, count] = by_type[pending_[i].type];
    if (id.empty()) id = pending_[i].id;
    ++count;
  }
  return db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(db.execute(sql, params).status());
    PORTCULLIS_RETURN_IF_ERROR(db.execute(outbox, ids).status());
    for (const auto& [type, counted] : by_type) {
      PORTCULLIS_RETURN_IF_ERROR(
          paging::add_to_count(db, count_scope(type), counted.first, counted.second));
    }
    return Status::ok();
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
