// RFC 3339 date-times from outside (query parameters such as the events API's start_time) as
// the database's UTC DATETIME(6) text. Fuzzed (tests/fuzz/rfc3339_fuzz.cc).
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis {

// "2026-11-21T10:00:00Z", "…T10:00:00.5+01:00" (RFC 3339 §5.6: 'T'/'t', 'Z'/'z' or a numeric
// offset, up to 9 fraction digits, a leap second read as :59) → "2026-11-21 09:00:00.500000";
// InvalidArgument for anything else, and for times before 1970 or after 9999.
Result<std::string> rfc3339_to_db_time(std::string_view text);

}  // namespace portcullis
