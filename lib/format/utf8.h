// UTF-8 checks for text that callers send and the service stores or shows (names, scope
// descriptions, client metadata). The JSON reader passes string bytes through as they came, and
// the database refuses invalid utf8mb4 with an error, so text is checked here, where the
// caller can be told which field is wrong.
#pragma once

#include <cstddef>
#include <string_view>

namespace portcullis::text {

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view s);

// The number of code points. REQUIRES: is_valid_utf8(s).
size_t utf8_length(std::string_view s);

// True when `s` holds a C0 control character, DEL or a C1 control (U+0080..U+009F): nothing a
// one-line display text (a name, a description) should carry into a page or a log.
bool has_control_characters(std::string_view s);

}  // namespace portcullis::text
