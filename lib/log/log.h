// Structured logs: one JSON object per line on stderr (journald or the run-local log file
// collects it). Callers pass fields, never whole requests, so a token or secret only reaches a
// log if someone names it as a field; `redact()` is for values that might hold one.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace portcullis::log {

enum class Level { kDebug, kInfo, kWarn, kError };

// A field value is kept as a string or a number; numbers are written unquoted.
struct Field {
  Field(std::string_view k, std::string_view v) : key(k), text(v) {}
  Field(std::string_view k, const std::string& v) : key(k), text(v) {}
  Field(std::string_view k, const char* v) : key(k), text(v) {}
  Field(std::string_view k, long long v)
      : key(k), number(static_cast<double>(v)), is_number(true) {}
  Field(std::string_view k, int v) : key(k), number(v), is_number(true) {}
  Field(std::string_view k, double v) : key(k), number(v), is_number(true) {}
  std::string_view key;
  std::string text;
  double number = 0;
  bool is_number = false;
};

// Sets the minimum level written and the `component` field of every line (binary name).
void init(std::string_view component, Level min_level);
Level parse_level(std::string_view name, Level fallback);

void write(Level level, std::string_view msg, std::initializer_list<Field> fields = {});
inline void debug(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kDebug, m, f);
}
inline void info(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kInfo, m, f);
}
inline void warn(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kWarn, m, f);
}
inline void error(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kError, m, f);
}

// The request being served (nginx's request id, lib/http/fastcgi.cc): every line written while
// it is set carries it as `request_id`, so a database warning deep in a store can be tied to
// its access-log line. The App sets it for each request and clears it after.
void set_request_id(std::string_view id);

// "abcd…(37 chars)" style mask for a value that must be identifiable but never reproducible.
std::string redact(std::string_view secret);

}  // namespace portcullis::log
