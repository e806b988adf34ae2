// An audit event (docs/events.md) as the workers record it: its declared type (types.def), who
// it is about, where it came from and its data.
#pragma once

#include <json/value.h>

#include <string>

#include "events/types.h"

namespace portcullis::events {

// Who an event is about, besides where it came from (ip, user agent).
struct Subjects {
  std::string organization_id;
  std::string user_id;
  std::string resource_id;
  std::string client_id;
};

struct Event {
  // An event of a declared type (types.def) with nothing else filled in.
  static Event of(const EventType& type, Subjects subjects = {});

  std::string type;  // a declared EventType's name: "token.issued", "user.login.succeeded", ...
  std::string organization_id;
  std::string user_id;
  std::string resource_id;
  std::string client_id;
  std::string ip;
  std::string user_agent;
  Json::Value data = Json::Value(Json::objectValue);
  // Set by Recorder::add: an event is stamped when it happens, not when its batch is written.
  std::string id;           // evt_…
  std::string occurred_at;  // DATETIME(6), UTC
};

}  // namespace portcullis::events
