// How long a fetched metadata document may be served from the cache (contract §2.2): what the
// response's caching headers say (RFC 9111 §4.2.1, as a shared cache), clamped to
// [kMinFreshSeconds, kMaxFreshSeconds].
//
// The lower bound is also the answer for no-store, no-cache, private, max-age=0, an Expires in
// the past, an unreadable date and no caching header at all: "a shorter max-age counts as
// 5 min". It bounds how often one client's sign-ins make us fetch its document, whatever the
// client's server says. The upper bound caps how long a changed document (a redirect URI
// removed after a compromise) keeps being honoured.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace portcullis::cimd {

inline constexpr int64_t kMinFreshSeconds = 5 * 60;
inline constexpr int64_t kMaxFreshSeconds = 24 * 60 * 60;

struct CachingHeaders {
  std::string_view cache_control;  // every Cache-Control field, comma-joined
  std::string_view expires;
  std::string_view date;
  std::string_view age;
};

// The freshness lifetime minus the response's age, before clamping; nullopt when the headers
// give no explicit lifetime. s-maxage wins over max-age, which wins over Expires − Date (Date
// defaults to `now`). Directive names are case-insensitive; a quoted value is accepted.
std::optional<int64_t> remaining_freshness(const CachingHeaders& headers, int64_t now);

// remaining_freshness clamped to the bounds above (kMinFreshSeconds when it is nullopt).
int64_t cache_seconds(const CachingHeaders& headers, int64_t now);

// An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") as Unix seconds; nullopt otherwise. The two
// obsolete HTTP-date forms are not read: an Expires we cannot read counts as already expired,
// which the lower bound turns into five minutes.
std::optional<int64_t> parse_http_date(std::string_view text);

}  // namespace portcullis::cimd
