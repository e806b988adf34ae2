// One HTTP request as a worker sees it (nginx has already parsed and normalised the HTTP). The
// FastCGI adapter (fastcgi.h) fills it; handlers only read it. Header names are lower-case.
#pragma once

#include <json/value.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace portcullis::http {

// Request bodies above this are refused with 413 (contract §0); nginx enforces it too.
inline constexpr size_t kMaxBodyBytes = 1024 * 1024;
// Hostile-input bounds, checked before any handler or authentication runs: a form body or a
// query string with more parameters, or a Cookie header with more cookies, is refused with 400
// in the family's shape. Every legitimate request uses a few dozen at most; the bounds keep the
// work a request can cause linear and small (issue 9, bench/hostile).
inline constexpr size_t kMaxParameters = 256;
inline constexpr size_t kMaxCookies = 256;

using Params = std::vector<std::pair<std::string, std::string>>;

// application/x-www-form-urlencoded or a query string, decoded. OAuth forbids repeating a
// parameter (RFC 6749 §3.1), so lookups can tell "absent" from "repeated".
class Form {
 public:
  Form() = default;
  explicit Form(Params params) : params_(std::move(params)) {}

  // The single value of `name`; nullopt when absent. REQUIRES: !repeated(name) for OAuth use.
  std::optional<std::string> get(std::string_view name) const;
  std::string get_or(std::string_view name, std::string fallback) const;
  bool has(std::string_view name) const { return get(name).has_value(); }
  // The first parameter that appears more than once, if any.
  std::optional<std::string> first_repeated() const;
  const Params& all() const { return params_; }

 private:
  Params params_;
};

// Decodes `a=1&b=x%20y+z`. Malformed percent escapes are an error, never a guess; so is a text
// with more than `max_parameters` parameters (checked before anything is decoded).
Result<Form> parse_urlencoded(std::string_view text, size_t max_parameters = kMaxParameters);
// The number of non-empty `separator`-separated items in `text` (parameters of a form or query
// string with '&', cookies of a Cookie header with ';'). Linear, allocates nothing.
size_t count_items(std::string_view text, char separator);
// Percent-decoding; `plus_is_space` for form bodies and query strings.
Result<std::string> url_decode(std::string_view in, bool plus_is_space);
std::string url_encode(std::string_view in);

struct Request {
  std::string method;        // as sent, upper-case
  std::string path;          // DOCUMENT_URI: decoded, normalised by nginx, without the query
  std::string query_string;  // raw
  Form query;                // decoded query parameters
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string remote_addr;
  std::string request_id;
  std::map<std::string, std::string> path_params;  // {name} segments filled by the router
  // FastCGI parameters named PORTCULLIS_* (whole name as key): per-location configuration that
  // nginx sets with fastcgi_param (the auth_request validator's resource and scopes). Clients
  // cannot set these: their headers arrive as HTTP_* parameters.
  std::map<std::string, std::string> gateway_params;

  std::optional<std::string> header(std::string_view lower_name) const;
  std::string content_type() const;  // media type only, lower-case, parameters removed
  std::optional<std::string> cookie(std::string_view name) const;
  std::string path_param(const std::string& name) const;

  // The body as a form; InvalidArgument unless the content type is urlencoded and it parses.
  Result<Form> form() const;
  // The body as a JSON object (strict parser, depth-limited); InvalidArgument with reason
  // "invalidSyntax" when it is not JSON or not an object.
  Result<Json::Value> json_object() const;
};

}  // namespace portcullis::http
