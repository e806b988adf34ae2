#include "cimd/freshness.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <string>

namespace portcullis::cimd {
namespace {

// Far beyond the upper bound; keeps arithmetic on hostile numbers from overflowing.
constexpr int64_t kSaturate = int64_t{1} << 40;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// delta-seconds (RFC 9111 §1.2.2): digits only; nullopt otherwise. Saturates rather than wraps.
std::optional<int64_t> delta_seconds(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
  }
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = std::min(kSaturate, value * 10 + (c - '0'));
  }
  return value;
}

// The lifetime Cache-Control gives, if any: 0 for directives that forbid reuse without
// revalidation, s-maxage over max-age; the smallest value when a directive repeats.
std::optional<int64_t> cache_control_lifetime(std::string_view field) {
  std::optional<int64_t> max_age, s_maxage;
  bool no_reuse = false;
  auto keep_smallest = [](std::optional<int64_t>& slot, std::optional<int64_t> v) {
    int64_t value = v.value_or(0);  // an unreadable value counts as stale
    slot = slot ? std::min(*slot, value) : value;
  };
  size_t start = 0;
  while (start <= field.size()) {
    // Split on commas outside quoted strings.
    size_t end = start;
    bool quoted = false;
    while (end < field.size() && (quoted || field[end] != ',')) {
      if (field[end] == '"') quoted = !quoted;
      ++end;
    }
    std::string_view directive = trim(field.substr(start, end - start));
    size_t eq = directive.find('=');
    std::string_view name = trim(directive.substr(0, eq));
    std::string_view value = eq == std::string_view::npos ? "" : trim(directive.substr(eq + 1));
    if (iequals(name, "no-store") || iequals(name, "no-cache") || iequals(name, "private")) {
      no_reuse = true;
    } else if (iequals(name, "max-age")) {
      keep_smallest(max_age, delta_seconds(value));
    } else if (iequals(name, "s-maxage")) {
      keep_smallest(s_maxage, delta_seconds(value));
    }
    start = end + 1;
  }
  if (no_reuse) return 0;
  if (s_maxage) return s_maxage;
  return max_age;
}

int two_digits(std::string_view s, size_t at) {
  if (!std::isdigit(static_cast<unsigned char>(s[at])) ||
      !std::isdigit(static_cast<unsigned char>(s[at + 1]))) {
    return -1;
  }
  return (s[at] - '0') * 10 + (s[at + 1] - '0');
}

}  // namespace

std::optional<int64_t> parse_http_date(std::string_view text) {
  // "Sun, 06 Nov 1994 08:49:37 GMT": fixed width, so fixed offsets.
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (text.size() != 29 || text.substr(3, 2) != ", " || text[7] != ' ' || text[11] != ' ' ||
      text[16] != ' ' || text[19] != ':' || text[22] != ':' || text.substr(25) != " GMT") {
    return std::nullopt;
  }
  int weekday = -1, month = -1;
  for (int i = 0; i < 7; ++i) {
    if (text.substr(0, 3) == kDays[i]) weekday = i;
  }
  for (int i = 0; i < 12; ++i) {
    if (text.substr(8, 3) == kMonths[i]) month = i;
  }
  int day = two_digits(text, 5), hour = two_digits(text, 17), minute = two_digits(text, 20),
      second = two_digits(text, 23), century = two_digits(text, 12), year2 = two_digits(text, 14);
  if (weekday < 0 || month < 0 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
      second < 0 || second > 60 || century < 0 || year2 < 0) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = century * 100 + year2 - 1900;
  tm.tm_mon = month;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = std::min(second, 59);  // a leap second is read as :59
  time_t t = ::timegm(&tm);
  // timegm normalises "31 Feb" into March: a date that does not survive the round trip, or
  // whose weekday is wrong, was not a real date.
  std::tm check{};
  if (!::gmtime_r(&t, &check) || check.tm_mday != day || check.tm_mon != month ||
      check.tm_wday != weekday) {
    return std::nullopt;
  }
  return static_cast<int64_t>(t);
}

std::optional<int64_t> remaining_freshness(const CachingHeaders& headers, int64_t now) {
  std::optional<int64_t> lifetime = cache_control_lifetime(headers.cache_control);
  if (!lifetime && !trim(headers.expires).empty()) {
    auto expires = parse_http_date(trim(headers.expires));
    auto date = parse_http_date(trim(headers.date));
    lifetime = expires ? std::clamp(*expires - date.value_or(now), -kSaturate, kSaturate) : 0;
  }
  if (!lifetime) return std::nullopt;
  int64_t age = delta_seconds(trim(headers.age)).value_or(0);
  return *lifetime - age;
}

int64_t cache_seconds(const CachingHeaders& headers, int64_t now) {
  return std::clamp(remaining_freshness(headers, now).value_or(kMinFreshSeconds), kMinFreshSeconds,
                    kMaxFreshSeconds);
}

}  // namespace portcullis::cimd
