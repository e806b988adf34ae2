// Time in one place: the clock the service reads, and the two wire formats (RFC 3339 UTC in
// API bodies, Unix seconds in JWT claims). Database timestamps are DATETIME(6) in UTC (every
// connection sets time_zone '+00:00').
#pragma once

#include <cstdint>
#include <string>

namespace portcullis {

int64_t unix_now();
// Milliseconds of a clock that never jumps (steady_clock): schedules and intervals, never
// timestamps.
int64_t monotonic_ms();

// "2026-11-21 10:00:00.123456" → "2026-11-21T10:00:00Z" (seconds precision, as the contract's
// examples show). Returns the input unchanged when it is not a DATETIME.
std::string db_time_to_rfc3339(const std::string& db_datetime);
std::string unix_to_rfc3339(int64_t unix_seconds);
// Now as a DATETIME(6) literal ("2026-11-21 10:00:00.123456", UTC), for rows whose creation
// time the caller must know without reading the row back.
std::string db_now();
// "2026-11-21T10:00:00.123Z": log lines.
std::string rfc3339_millis_now();

}  // namespace portcullis
