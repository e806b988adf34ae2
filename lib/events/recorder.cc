#include "events/recorder.h"

#include "core/ids.h"
#include "format/json.h"
#include "log/log.h"

namespace portcullis::events {
namespace {

constexpr size_t kMaxPending = 10000;
constexpr size_t kMaxRowsPerInsert = 100;

store::Value optional_text(const std::string& s) {
  if (s.empty()) return nullptr;
  return s;
}

}  // namespace

Status Recorder::flush(store::Db& db) {
  while (!pending_.empty()) {
    size_t n = std::min(pending_.size(), kMaxRowsPerInsert);
    std::string sql =
        "INSERT INTO events (id, type, occurred_at, organization_id, user_id, resource_id, "
        "client_id, ip, user_agent, data) VALUES ";
    store::Params params;
    for (size_t i = 0; i < n; ++i) {
      const Event& e = pending_[i];
      if (i) sql += ", ";
      sql += "(?, ?, UTC_TIMESTAMP(6), ?, ?, ?, ?, ?, ?, ?)";
      params.emplace_back(new_id("evt_"));
      params.emplace_back(e.type);
      params.push_back(optional_text(e.organization_id));
      params.push_back(optional_text(e.user_id));
      params.push_back(optional_text(e.resource_id));
      params.push_back(optional_text(e.client_id));
      params.push_back(optional_text(e.ip));
      params.push_back(optional_text(e.user_agent.substr(0, 512)));
      params.emplace_back(json::write(e.data));
    }
    Status st = db.execute(sql, params).status();
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
