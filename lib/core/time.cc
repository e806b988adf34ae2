#include "core/time.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace portcullis {

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string db_time_to_rfc3339(const std::string& db) {
  // YYYY-MM-DD HH:MM:SS[.ffffff]
  if (db.size() < 19 || db[10] != ' ') return db;
  std::string out = db.substr(0, 19);
  out[10] = 'T';
  out += 'Z';
  return out;
}

namespace {

int64_t now_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

enum class Layout { kRfc3339Seconds, kRfc3339Millis, kDatetimeMicros };

// Every UTC timestamp the service writes comes out of this one formatter.
std::string format_utc(int64_t micros, Layout layout) {
  std::time_t secs = static_cast<std::time_t>(micros / 1000000);
  int fraction = static_cast<int>(micros % 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  int y = tm.tm_year + 1900, mo = tm.tm_mon + 1;
  switch (layout) {
    case Layout::kRfc3339Seconds:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, tm.tm_mday,
                    tm.tm_hour, tm.tm_min, tm.tm_sec);
      break;
    case Layout::kRfc3339Millis:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, mo, tm.tm_mday,
                    tm.tm_hour, tm.tm_min, tm.tm_sec, fraction / 1000);
      break;
    case Layout::kDatetimeMicros:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06d", y, mo, tm.tm_mday,
                    tm.tm_hour, tm.tm_min, tm.tm_sec, fraction);
      break;
  }
  return buf;
}

}  // namespace

std::string unix_to_rfc3339(int64_t unix_seconds) {
  return format_utc(unix_seconds * 1000000, Layout::kRfc3339Seconds);
}

std::string rfc3339_millis_now() {
  return format_utc(now_micros(), Layout::kRfc3339Millis);
}

std::string db_now() {
  return format_utc(now_micros(), Layout::kDatetimeMicros);
}

}  // namespace portcullis
