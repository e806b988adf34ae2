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

}  // namespace

void Recorder::add(Event event) {
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
    store::Params params;
    for (size_t i = 0; i < n; ++i) {
      const Event& e = pending_[i];
      if (i) sql += ", ";
      sql += "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
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
    Status st = db.execute(sql, params).status();
    // Ids are fixed when an event is added, so a batch whose earlier INSERT did commit before
    // the connection failed (an unknown outcome) comes back as a duplicate: it is written.
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
