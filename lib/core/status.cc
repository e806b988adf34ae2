#include "core/status.h"

#include <ostream>

namespace portcullis {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      return "invalid_argument";
    case Code::kUnauthenticated:
      return "unauthenticated";
    case Code::kPermissionDenied:
      return "permission_denied";
    case Code::kNotFound:
      return "not_found";
    case Code::kAlreadyExists:
      return "already_exists";
    case Code::kFailedPrecondition:
      return "failed_precondition";
    case Code::kResourceExhausted:
      return "resource_exhausted";
    case Code::kInternal:
      return "internal";
    case Code::kUnavailable:
      return "unavailable";
  }
  return "internal";
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
