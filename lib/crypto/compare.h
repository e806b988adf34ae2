// Comparison of secrets without a timing side channel.
#pragma once

#include <string_view>

namespace portcullis::crypto {

// True when a and b hold the same bytes. The time taken depends only on the lengths, never on
// where the first difference is, so a caller comparing a presented secret against a stored one
// leaks at most the stored length. Strings of different lengths are unequal without reading
// their contents.
bool constant_time_equals(std::string_view a, std::string_view b);

}  // namespace portcullis::crypto
