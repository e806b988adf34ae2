#include "http/fastcgi.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <utility>

namespace portcullis::http {
namespace {

std::string header_name_from_param(std::string_view param) {
  // HTTP_USER_AGENT → user-agent
  std::string name(param);
  for (char& c : name) {
    c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return name;
}

std::string param(const runtime::fastcgi::Request& fcgi, std::string_view name) {
  const std::string* v = fcgi.param(name);
  return v ? *v : std::string();
}

}  // namespace

BodyRead read_request(runtime::fastcgi::Request& fcgi, Request& out) {
  out.method = param(fcgi, "REQUEST_METHOD");
  out.path = param(fcgi, "DOCUMENT_URI");
  if (out.path.empty()) {
    // Not behind our nginx template: fall back to REQUEST_URI without its query.
    std::string uri = param(fcgi, "REQUEST_URI");
    out.path = uri.substr(0, uri.find('?'));
  }
  out.query_string = param(fcgi, "QUERY_STRING");
  out.remote_addr = param(fcgi, "REMOTE_ADDR");
  out.request_id = param(fcgi, "REQUEST_ID");
  for (const auto& [name_text, value_text] : fcgi.params) {
    std::string_view name = name_text;
    std::string_view value = value_text;
    if (name.rfind("HTTP_", 0) == 0) {
      out.headers[header_name_from_param(name.substr(5))] = std::string(value);
    } else if (name.rfind("PORTCULLIS_", 0) == 0) {
      out.gateway_params[std::string(name)] = std::string(value);
    } else if (name == "CONTENT_TYPE" || name == "CONTENT_LENGTH") {
      if (!value.empty()) out.headers[header_name_from_param(name)] = std::string(value);
    }
  }
  // Bounded before anything else reads them (issue 9): a handler never sees more parameters or
  // cookies than the limits of request.h. A malformed query string reads as empty, as before.
  if (count_items(out.query_string, '&') > kMaxParameters) return BodyRead::kTooManyParameters;
  if (auto cookies = out.headers.find("cookie");
      cookies != out.headers.end() && count_items(cookies->second, ';') > kMaxCookies) {
    return BodyRead::kTooManyCookies;
  }
  if (auto q = parse_urlencoded(out.query_string)) out.query = std::move(q).value();

  std::string length_text = param(fcgi, "CONTENT_LENGTH");
  if (length_text.empty()) return BodyRead::kOk;  // nginx always sets it when there is a body
  unsigned long long length = 0;
  auto [ptr, ec] =
      std::from_chars(length_text.data(), length_text.data() + length_text.size(), length);
  if (ec != std::errc() || ptr != length_text.data() + length_text.size()) {
    return BodyRead::kBadLength;
  }
  if (length > kMaxBodyBytes) return BodyRead::kTooLarge;
  // The body is what FCGI_STDIN carried, up to CONTENT_LENGTH (the runtime keeps at most its
  // limit, never below kMaxBodyBytes: server/worker_main.cc).
  out.body = std::move(fcgi.body);
  if (out.body.size() < length) return BodyRead::kTruncated;
  out.body.resize(length);
  return BodyRead::kOk;
}

std::string serialize_response(const Response& response) {
  std::string out;
  out.reserve(256 + response.body.size());
  out += "Status: ";
  out += std::to_string(response.status);
  out += ' ';
  out += reason_phrase(response.status);
  out += "\r\n";
  for (const auto& [name, value] : response.headers) {
    // A header value never carries a line break: refuse to split the response.
    if (value.find_first_of("\r\n") != std::string::npos) continue;
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  out += "Content-Length: ";
  out += std::to_string(response.body.size());
  out += "\r\n\r\n";
  out += response.body;
  return out;
}

}  // namespace portcullis::http
