#include "http/fastcgi.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

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

std::string param(FCGX_Request& fcgi, const char* name) {
  const char* v = FCGX_GetParam(name, fcgi.envp);
  return v ? std::string(v) : std::string();
}

}  // namespace

BodyRead read_request(FCGX_Request& fcgi, Request& out) {
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
  for (char** e = fcgi.envp; e && *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = kv.substr(0, eq);
    std::string_view value = kv.substr(eq + 1);
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
  // Refused unread, as are the refusals above: runtime::finish_request drains the body.
  if (length > kMaxBodyBytes) return BodyRead::kTooLarge;
  out.body.resize(length);
  size_t got = 0;
  while (got < length) {
    int n = FCGX_GetStr(out.body.data() + got, static_cast<int>(length - got), fcgi.in);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got != length) {
    out.body.resize(got);
    return BodyRead::kTruncated;
  }
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

void write_response(FCGX_Request& fcgi, const Response& response) {
  std::string wire = serialize_response(response);
  FCGX_PutStr(wire.data(), static_cast<int>(wire.size()), fcgi.out);
}

}  // namespace portcullis::http
