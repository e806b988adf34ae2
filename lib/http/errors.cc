#include "http/errors.h"

#include <json/value.h>

#include <iterator>
#include <string>

namespace portcullis::http {
namespace {

std::string_view default_oauth_error(Code code) {
  switch (code) {
    case Code::kInvalidArgument:
    case Code::kFailedPrecondition:
    case Code::kAlreadyExists:
      return "invalid_request";
    case Code::kUnauthenticated:
      return "invalid_client";
    case Code::kPermissionDenied:
      return "access_denied";
    case Code::kNotFound:
      return "not_found";
    case Code::kResourceExhausted:
    case Code::kUnavailable:
      return "temporarily_unavailable";
    case Code::kOk:
    case Code::kInternal:
      return "server_error";
  }
  return "server_error";
}

std::string_view default_scim_type(Code code) {
  switch (code) {
    case Code::kInvalidArgument:
      return "invalidValue";
    case Code::kAlreadyExists:
      return "uniqueness";
    case Code::kFailedPrecondition:
      return "invalidValue";
    default:
      return "";
  }
}

}  // namespace

int http_status_for(Code code) {
  // Indexed by Code, in its declaration order (core/status.h). A failed precondition is the
  // caller's to fix (400); 409 is kept for an identifier that already exists.
  static constexpr int kStatuses[] = {200, 400, 401, 403, 404, 409, 400, 429, 500, 503};
  static_assert(std::size(kStatuses) == static_cast<size_t>(Code::kUnavailable) + 1);
  auto index = static_cast<size_t>(code);
  return index < std::size(kStatuses) ? kStatuses[index] : 500;
}

Response oauth_error(int http_status, std::string_view error, std::string_view description) {
  Json::Value body(Json::objectValue);
  body["error"] = std::string(error);
  if (!description.empty()) body["error_description"] = std::string(description);
  return Response::json(http_status, body);
}

Response scim_error(int http_status, std::string_view scim_type, std::string_view detail) {
  Json::Value body(Json::objectValue);
  body["schemas"].append("urn:ietf:params:scim:api:messages:2.0:Error");
  body["status"] = std::to_string(http_status);
  if (!scim_type.empty()) body["scimType"] = std::string(scim_type);
  if (!detail.empty()) body["detail"] = std::string(detail);
  return Response::json(http_status, body, "application/scim+json");
}

Response problem(int http_status, Code code, std::string_view detail) {
  Json::Value body(Json::objectValue);
  body["type"] = "about:blank";
  body["title"] = std::string(reason_phrase(http_status));
  body["status"] = http_status;
  body["code"] = std::string(code_name(code));
  if (!detail.empty()) body["detail"] = std::string(detail);
  Response r = Response::json(http_status, body, "application/problem+json");
  if (http_status == 401) r.set_header("WWW-Authenticate", "Bearer");
  return r;
}

Response error_response(Family family, const Status& status, int http_status_override) {
  int http_status = http_status_override ? http_status_override : http_status_for(status.code());
  Response r;
  switch (family) {
    case Family::kOAuth:
      r = oauth_error(
          http_status,
          status.reason().empty() ? default_oauth_error(status.code()) : status.reason(),
          status.message());
      break;
    case Family::kScim:
      // RFC 7644 §3.12 defines scimType for 400 and 409 only.
      r = scim_error(http_status,
                     http_status != 400 && http_status != 409 ? std::string_view()
                     : status.reason().empty()                ? default_scim_type(status.code())
                                                              : std::string_view(status.reason()),
                     status.message());
      // RFC 6750 §3; the detail says no more than that a token is needed.
      if (http_status == 401) r.set_header("WWW-Authenticate", "Bearer");
      break;
    case Family::kApi:
      r = problem(http_status, status.code(), status.message());
      break;
  }
  if (status.retry_after() > 0) {
    r.set_header("Retry-After", std::to_string(status.retry_after()));
  } else if (status.code() == Code::kUnavailable) {
    r.set_header("Retry-After", "1");
  }
  return r;
}

}  // namespace portcullis::http
