// Checks for text that callers send and the service stores or shows (names, scope
// descriptions, client metadata, URLs). The JSON reader passes string bytes through as they
// came, and the database refuses invalid utf8mb4 with an error, so text is checked before it
// gets there, where the caller can be told which field is wrong.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::text {

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view s);

// The number of code points. REQUIRES: is_valid_utf8(s).
size_t utf8_length(std::string_view s);

// True when `s` holds a C0 control character, DEL or a C1 control (U+0080..U+009F): nothing a
// one-line display text (a name, a description) should carry into a page or a log.
bool has_control_characters(std::string_view s);

// What is wrong with `s` as one line of display text of at most `max_chars` code points —
// "is not valid UTF-8", "must not contain control characters", "is longer than 200
// characters" — for the caller to put after the field's name; nullopt when nothing is.
std::optional<std::string> display_text_problem(std::string_view s, size_t max_chars);

// The same as a Status: InvalidArgument "<field> <problem>" for a bad value; with `required`,
// also for a value that is empty or only spaces ("<field> must not be empty").
Status check_display_text(std::string_view value, std::string_view field, size_t max_chars,
                          bool required);

// Only printable ASCII, no space and no backslash: what an identifier-like value compared
// byte for byte (a URL, a server URL) may hold, so it cannot be spelled two ways.
bool is_printable_ascii(std::string_view s);

}  // namespace portcullis::text
