// The event-type registry (contract §11): every type Portcullis records is declared once, in
// types.def, with the subject ids it carries and its data fields. Recording goes through it
// (`server::Context::event(events::type::kTokenIssued)`), the events API checks its `types`
// filter against it, and webhook endpoints' `event_types` filters are checked against it.
#pragma once

#include <string_view>
#include <vector>

namespace portcullis::events {

struct EventType {
  std::string_view name;      // "token.issued"
  std::string_view subjects;  // space-separated: organization_id user_id resource_id client_id
  std::string_view fields;    // space-separated names of its `data` members
  std::string_view summary;

  // Whether `field` is one of the declared data fields.
  bool declares(std::string_view field) const;
};

namespace type {
#define PORTCULLIS_EVENT_TYPE(ident, name, subjects, fields, summary) extern const EventType ident;
#include "events/types.def"
#undef PORTCULLIS_EVENT_TYPE
}  // namespace type

// Every declared type, in declaration order.
const std::vector<const EventType*>& all_types();
// The declared type of that name, or nullptr.
const EventType* find_type(std::string_view name);

}  // namespace portcullis::events
