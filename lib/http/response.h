// What a handler gives back. The FastCGI adapter writes it; the pipeline adds the headers every
// response carries (request id, nosniff, the default Cache-Control) after the handler ran.
#pragma once

#include <json/value.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace portcullis::http {

struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // Replaces any header of that name (case-insensitive).
  void set_header(std::string_view name, std::string value);
  std::optional<std::string> header(std::string_view name) const;

  static Response json(int status, const Json::Value& body,
                       std::string_view content_type = "application/json");
  static Response text(int status, std::string body, std::string_view content_type);
  static Response empty(int status);
  // 303 See Other: the only redirect after a form POST that cannot replay it (RFC 9700 §4.12).
  static Response see_other(std::string location);
};

std::string_view reason_phrase(int status);

}  // namespace portcullis::http
