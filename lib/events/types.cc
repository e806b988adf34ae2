#include "events/types.h"

namespace portcullis::events {

namespace type {
#define PORTCULLIS_EVENT_TYPE(ident, name, subjects, fields, summary) \
  const EventType ident{name, subjects, fields, summary};
#include "events/types.def"
#undef PORTCULLIS_EVENT_TYPE
}  // namespace type

bool EventType::declares(std::string_view field) const {
  std::string_view rest = fields;
  while (!rest.empty()) {
    size_t space = rest.find(' ');
    std::string_view word = rest.substr(0, space);
    if (word == field) return true;
    if (space == std::string_view::npos) break;
    rest.remove_prefix(space + 1);
  }
  return false;
}

const std::vector<const EventType*>& all_types() {
  static const std::vector<const EventType*> types = {
#define PORTCULLIS_EVENT_TYPE(ident, name, subjects, fields, summary) &type::ident,
#include "events/types.def"
#undef PORTCULLIS_EVENT_TYPE
  };
  return types;
}

const EventType* find_type(std::string_view name) {
  for (const EventType* t : all_types()) {
    if (t->name == name) return t;
  }
  return nullptr;
}

}  // namespace portcullis::events
