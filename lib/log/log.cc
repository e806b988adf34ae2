#include "log/log.h"

#include <json/json.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>

#include "core/time.h"
#include "format/json.h"

namespace portcullis::log {
namespace {

Level g_min = Level::kInfo;
std::string g_component = "portcullis";
std::string g_request_id;
pid_t g_pid = 0;

// getpid() is a system call (glibc stopped caching it) and a worker writes a line per request;
// the cache is cleared in a child after fork(), so a forked worker names itself.
pid_t current_pid() {
  static const bool forget_in_children = ::pthread_atfork(nullptr, nullptr, [] { g_pid = 0; }) == 0;
  if (g_pid == 0 || !forget_in_children) g_pid = ::getpid();
  return g_pid;
}

std::string_view level_name(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void set_request_id(std::string_view id) {
  g_request_id.assign(id);
}

void init(std::string_view component, Level min_level) {
  g_component = std::string(component);
  g_min = min_level;
}

Level parse_level(std::string_view name, Level fallback) {
  if (name == "debug") return Level::kDebug;
  if (name == "info") return Level::kInfo;
  if (name == "warn" || name == "warning") return Level::kWarn;
  if (name == "error") return Level::kError;
  return fallback;
}

void write(Level level, std::string_view msg, std::initializer_list<Field> fields) {
  if (level < g_min) return;
  Json::Value line(Json::objectValue);
  line["ts"] = rfc3339_millis_now();
  line["level"] = std::string(level_name(level));
  line["component"] = g_component;
  line["pid"] = static_cast<Json::Int>(current_pid());
  line["msg"] = std::string(msg);
  if (!g_request_id.empty()) line["request_id"] = g_request_id;
  for (const Field& f : fields) {
    std::string key(f.key);
    if (f.is_number) {
      if (std::floor(f.number) == f.number && std::fabs(f.number) < 9e15) {
        line[key] = static_cast<Json::Int64>(f.number);
      } else {
        line[key] = f.number;
      }
    } else {
      line[key] = f.text;
    }
  }
  std::string out = json::write(line);
  out.push_back('\n');
  // One write(2) per line keeps lines whole when several processes share the file.
  ssize_t ignored = ::write(STDERR_FILENO, out.data(), out.size());
  (void)ignored;
}

std::string redact(std::string_view secret) {
  std::string out(secret.substr(0, secret.size() >= 16 ? 4 : 0));
  out += "…(" + std::to_string(secret.size()) + " chars)";
  return out;
}

}  // namespace portcullis::log
