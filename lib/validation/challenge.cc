#include "validation/challenge.h"

#include <json/value.h>

#include "dpop/presentation.h"
#include "format/json.h"
#include "format/scope_list.h"

namespace portcullis::validation {
namespace {

// An auth-param value as an RFC 9110 quoted-string.
void append_param(std::string& out, std::string_view name, std::string_view value) {
  if (out.find('=') != std::string::npos) out += ',';
  out += ' ';
  out += name;
  out += "=\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

}  // namespace

namespace {

// Where the path of an absolute URL starts (npos when it has none).
size_t path_start_of(std::string_view url) {
  const size_t scheme_end = url.find("://");
  return scheme_end == std::string_view::npos ? std::string_view::npos
                                              : url.find('/', scheme_end + 3);
}

}  // namespace

std::string protected_resource_metadata_url(std::string_view server_url) {
  const size_t path_start = path_start_of(server_url);
  std::string_view origin = server_url.substr(0, path_start);
  std::string_view path =
      path_start == std::string_view::npos ? std::string_view() : server_url.substr(path_start);
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  std::string out(origin);
  out += "/.well-known/oauth-protected-resource";
  out += path;
  return out;
}

std::string request_url(std::string_view server_url, std::string_view request_target) {
  std::string_view target = request_target;
  if (target.find("://") != std::string_view::npos) {
    // An absolute URL (an older snippet's $scheme://$http_host$request_uri): its path only.
    const size_t path_start = path_start_of(target);
    target = path_start == std::string_view::npos ? std::string_view() : target.substr(path_start);
  }
  std::string out(server_url.substr(0, path_start_of(server_url)));
  if (target.empty() || target.front() != '/') out += '/';
  out += target;
  return out;
}

std::string www_authenticate(const Verdict& verdict, std::string_view resource_metadata_url,
                             std::string_view required_scopes) {
  if (verdict.outcome == Outcome::kInvalidToken && !verdict.dpop_error.empty()) {
    std::string out = "DPoP";
    append_param(out, "error", verdict.dpop_error);
    append_param(out, "error_description", verdict.reason);
    out += ", " + dpop::supported_algs_param();
    append_param(out, "resource_metadata", resource_metadata_url);
    return out;
  }
  std::string out = "Bearer";
  switch (verdict.outcome) {
    case Outcome::kValid:
    case Outcome::kUnavailable:
      return "";
    case Outcome::kNoToken:
      if (!required_scopes.empty()) append_param(out, "scope", required_scopes);
      break;
    case Outcome::kInvalidToken:
      append_param(out, "error", "invalid_token");
      if (!required_scopes.empty()) append_param(out, "scope", required_scopes);
      break;
    case Outcome::kInsufficientScope:
      append_param(out, "error", "insufficient_scope");
      append_param(out, "scope", verdict.missing_scope);
      break;
  }
  append_param(out, "resource_metadata", resource_metadata_url);
  return out;
}

std::string insufficient_scope_body(std::string_view scope) {
  Json::Value body(Json::objectValue);
  body["error"] = "insufficient_scope";
  body["error_description"] = "Required scope: " + std::string(scope);
  return json::write(body);
}

http::Response challenge_response(const Verdict& verdict, std::string_view resource_metadata_url,
                                  const std::vector<std::string>& required_scopes) {
  http::Response r;
  r.status = verdict.http_status();
  r.set_header("Content-Type", "application/json");
  r.set_header("Cache-Control", "no-store");
  if (verdict.outcome == Outcome::kInsufficientScope) {
    r.body = insufficient_scope_body(verdict.missing_scope);
  } else {
    Json::Value body(Json::objectValue);
    if (verdict.outcome == Outcome::kUnavailable) {
      body["error"] = "temporarily_unavailable";
      body["error_description"] = "The token cannot be checked right now; retry later.";
      r.set_header("Retry-After", "5");
    } else {
      body["error"] = verdict.outcome == Outcome::kNoToken ? "invalid_request"
                      : verdict.dpop_error.empty()         ? "invalid_token"
                                                           : verdict.dpop_error;
      body["error_description"] = verdict.outcome == Outcome::kNoToken
                                      ? "An access token is required."
                                      : "The access token is invalid.";
    }
    r.body = json::write(body);
  }
  const std::string challenge =
      www_authenticate(verdict, resource_metadata_url, format::join_scopes(required_scopes));
  if (!challenge.empty()) r.set_header("WWW-Authenticate", challenge);
  return r;
}

}  // namespace portcullis::validation
