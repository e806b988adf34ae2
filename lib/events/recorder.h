// Audit events (contract §11). Handlers add events to the request's Recorder while they work;
// the pipeline writes them in one multi-row INSERT after the response has been sent (the
// "event" phase), so recording never adds latency to the caller.
#pragma once

#include <json/value.h>

#include <string>
#include <vector>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::events {

struct Event {
  std::string type;  // "token.issued", "user.login.succeeded", ...
  std::string organization_id;
  std::string user_id;
  std::string resource_id;
  std::string client_id;
  std::string ip;
  std::string user_agent;
  Json::Value data = Json::Value(Json::objectValue);
};

class Recorder {
 public:
  void add(Event event) { pending_.push_back(std::move(event)); }
  bool empty() const { return pending_.empty(); }
  size_t size() const { return pending_.size(); }
  // Writes every pending event (ids and timestamps assigned now) and clears the batch. On a
  // database failure the events are kept for the next flush, up to a bound, then dropped with
  // a log line: an outage must not grow a worker's memory without limit.
  Status flush(store::Db& db);

 private:
  std::vector<Event> pending_;
};

}  // namespace portcullis::events
