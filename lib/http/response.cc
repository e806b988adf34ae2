#include "http/response.h"

#include <strings.h>

#include "format/json.h"

namespace portcullis::http {

void Response::set_header(std::string_view name, std::string value) {
  for (auto& [k, v] : headers) {
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), name.size()) == 0) {
      v = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::string(name), std::move(value));
}

std::optional<std::string> Response::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), name.size()) == 0) return v;
  }
  return std::nullopt;
}

Response Response::json(int status, const Json::Value& body, std::string_view content_type) {
  Response r;
  r.status = status;
  r.body = json::write(body);
  r.set_header("Content-Type", std::string(content_type));
  return r;
}

Response Response::text(int status, std::string body, std::string_view content_type) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  r.set_header("Content-Type", std::string(content_type));
  return r;
}

Response Response::empty(int status) {
  Response r;
  r.status = status;
  return r;
}

Response Response::see_other(std::string location) {
  Response r;
  r.status = 303;
  r.set_header("Location", std::move(location));
  return r;
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Internal Server Error";
  }
}

}  // namespace portcullis::http
