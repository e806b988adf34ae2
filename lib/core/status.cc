#include "core/status.h"

#include <iterator>
#include <ostream>

namespace portcullis {

std::string_view code_name(Code code) {
  // Indexed by Code, in its declaration order (status.h).
  static constexpr std::string_view kNames[] = {
      "ok",        "invalid_argument", "unauthenticated",     "permission_denied",
      "not_found", "already_exists",   "failed_precondition", "resource_exhausted",
      "internal",  "unavailable"};
  static_assert(std::size(kNames) == static_cast<size_t>(Code::kUnavailable) + 1);
  auto index = static_cast<size_t>(code);
  return index < std::size(kNames) ? kNames[index] : "internal";
}

std::ostream& operator<<(std::ostream& out, Code code) {
  return out << code_name(code);
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  std::string s(code_name(code_));
  s += ": ";
  s += message_;
  return s;
}

}  // namespace portcullis
