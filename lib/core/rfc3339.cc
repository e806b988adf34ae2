#include "core/rfc3339.h"

#include <cstdio>

#include "core/time.h"

namespace portcullis {
namespace {

bool digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return false;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

int number(std::string_view s, size_t pos, size_t n) {
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) v = v * 10 + (s[i] - '0');
  return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool leap(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

}  // namespace

Result<std::string> rfc3339_to_db_time(std::string_view s) {
  const Status bad =
      Status::invalid_argument("times must be RFC 3339 date-times such as 2026-11-21T10:00:00Z");
  // YYYY-MM-DDTHH:MM:SS
  if (s.size() < 20 || s.size() > 40 || !digits(s, 0, 4) || s[4] != '-' || !digits(s, 5, 2) ||
      s[7] != '-' || !digits(s, 8, 2) || (s[10] != 'T' && s[10] != 't') || !digits(s, 11, 2) ||
      s[13] != ':' || !digits(s, 14, 2) || s[16] != ':' || !digits(s, 17, 2)) {
    return bad;
  }
  int year = number(s, 0, 4), month = number(s, 5, 2), day = number(s, 8, 2);
  int hour = number(s, 11, 2), minute = number(s, 14, 2), second = number(s, 17, 2);
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1970 || month < 1 || month > 12 || day < 1) return bad;
  int month_days = kDays[month - 1] + (month == 2 && leap(year) ? 1 : 0);
  if (day > month_days || hour > 23 || minute > 59 || second > 60) return bad;
  if (second == 60) second = 59;  // a leap second: the last representable instant
  size_t pos = 19;
  int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    size_t n = pos - start;
    if (n == 0 || n > 9) return bad;
    for (size_t i = 0; i < 6; ++i) micros = micros * 10 + (i < n ? s[start + i] - '0' : 0);
  }
  if (pos >= s.size()) return bad;
  int offset_minutes = 0;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    if (!digits(s, pos + 1, 2) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !digits(s, pos + 4, 2)) {
      return bad;
    }
    int oh = number(s, pos + 1, 2), om = number(s, pos + 4, 2);
    if (oh > 23 || om > 59) return bad;
    offset_minutes = (s[pos] == '+' ? 1 : -1) * (oh * 60 + om);
    pos += 6;
  } else {
    return bad;
  }
  if (pos != s.size()) return bad;
  int64_t seconds =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
      hour * 3600 + minute * 60 + second - offset_minutes * 60;
  if (seconds < 0 || seconds > 253402300799) return bad;  // 9999-12-31T23:59:59Z
  std::string base = unix_to_rfc3339(seconds);            // "YYYY-MM-DDTHH:MM:SSZ"
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%06lld", static_cast<long long>(micros));
  return base.substr(0, 10) + " " + base.substr(11, 8) + frac;
}

}  // namespace portcullis
