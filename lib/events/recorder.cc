#include "events/recorder.h"

#include "core/ids.h"
#include "core/time.h"
#include "format/json.h"
#include "log/log.h"

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

Status Recorder::flush(store::Db& db) {
  while (!pending_.empty()) {
    size_t n = std::min(pending_.size(), kRowsPerInsert);
    std::string sql =
        "INSERT INTO events (id, type, occurred_at, organization_id, user_id, resource_id, "
        "client_id, ip, user_agent, data) VALUES ";
    // The transactional outbox: the deliveries of these events to every enabled webhook
    // endpoint whose filter takes them are inserted in the same transaction as the events, so
    // an event is never written without its deliveries (nor the other way round). The
    // webhook-id (the delivery's id) is derived from the event and the endpoint: stable.
    std::string outbox =
        "INSERT INTO webhook_deliveries (id, webhook_id, event_id, state, attempts, "
        "next_attempt_at, create_time, update_time) "
        "SELECT CONCAT('msg_', SUBSTRING(e.id, 5), '_', SUBSTRING(w.id, 5)), w.id, e.id, "
        "'pending', 0, e.occurred_at, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) "
        "FROM events e JOIN webhooks w ON w.enabled = 1 AND (JSON_LENGTH(w.event_types) = 0 "
        "OR JSON_CONTAINS(w.event_types, JSON_QUOTE(e.type))) WHERE e.id IN (";
    store::Params params, ids;
    for (size_t i = 0; i < n; ++i) {
      const Event& e = pending_[i];
      if (i) sql += ", ", outbox += ", ";
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
    Status st = db.transaction([&]() -> Status {
      PORTCULLIS_RETURN_IF_ERROR(db.execute(sql, params).status());
      return db.execute(outbox, ids).status();
    });
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
