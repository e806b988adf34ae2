// Errors as values on the request path (LevelDB's Status, with a payload-carrying Result<T>).
//
// A Status is either ok or a (code, message) pair. The codes are the management API's problem
// codes (contract §0); the http layer maps each to a status and to the error family's shape, so
// lib/ code never formats an error body itself. Messages are shown to API callers: they must
// never contain a secret or a token.
#pragma once

#include <cassert>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace portcullis {

enum class Code {
  kOk,
  kInvalidArgument,
  kUnauthenticated,
  kPermissionDenied,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kResourceExhausted,
  kInternal,
  kUnavailable,
};

// The snake_case name used as the problem+json `code` (contract §0).
std::string_view code_name(Code code);
std::ostream& operator<<(std::ostream& out, Code code);  // for test diagnostics

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  static Status invalid_argument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status unauthenticated(std::string m) { return {Code::kUnauthenticated, std::move(m)}; }
  static Status permission_denied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
  static Status not_found(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status already_exists(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
  static Status failed_precondition(std::string m) {
    return {Code::kFailedPrecondition, std::move(m)};
  }
  static Status resource_exhausted(std::string m) {
    return {Code::kResourceExhausted, std::move(m)};
  }
  static Status internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  static Status unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;

  // A machine-readable refinement in the caller's protocol vocabulary: an OAuth `error`
  // (`invalid_grant`, `invalid_redirect_uri`, ...) or a SCIM `scimType` (`uniqueness`, ...).
  // The error family that formats the Status uses it instead of its default for the code.
  Status&& with_reason(std::string reason) && {
    reason_ = std::move(reason);
    return std::move(*this);
  }
  const std::string& reason() const { return reason_; }

  // Seconds a client should wait before retrying (429, 503); 0 = no Retry-After.
  Status&& with_retry_after(int seconds) && {
    retry_after_ = seconds;
    return std::move(*this);
  }
  int retry_after() const { return retry_after_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::string reason_;
  int retry_after_ = 0;
};

// A value or the Status saying why there is none. REQUIRES: a Status given to it is not ok.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design, like std::expected
  Result(Status status) : v_(std::move(status)) {
    assert(!std::get<Status>(v_).is_ok() && "Result built from an ok Status");
  }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }

  // REQUIRES: is_ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // The error, or an ok Status when there is a value.
  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace portcullis

#define PORTCULLIS_CONCAT_INNER(a, b) a##b
#define PORTCULLIS_CONCAT(a, b) PORTCULLIS_CONCAT_INNER(a, b)

// Early return of a non-ok Status from a function returning Status or Result<T>.
#define PORTCULLIS_RETURN_IF_ERROR(expr)                                 \
  do {                                                                   \
    ::portcullis::Status PORTCULLIS_CONCAT(_status_, __LINE__) = (expr); \
    if (!PORTCULLIS_CONCAT(_status_, __LINE__).is_ok())                  \
      return PORTCULLIS_CONCAT(_status_, __LINE__);                      \
  } while (0)

#define PORTCULLIS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                     \
  if (!tmp.is_ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
// `PORTCULLIS_ASSIGN_OR_RETURN(auto x, f());` binds x to f()'s value or returns its Status.
#define PORTCULLIS_ASSIGN_OR_RETURN(lhs, expr) \
  PORTCULLIS_ASSIGN_OR_RETURN_IMPL(PORTCULLIS_CONCAT(_result_, __LINE__), lhs, expr)
