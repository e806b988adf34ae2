// UTF-8 as RFC 3629 defines it. jsoncpp passes raw bytes through and turns a lone "\udc00"
// escape into CESU-8, so text that reaches a page, a log or a utf8mb4 column is checked here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace portcullis::utf8 {

// The code points of `text`, or nullopt when it is not well-formed UTF-8: a truncated or
// overlong sequence, a surrogate (U+D800–U+DFFF) or anything above U+10FFFF.
std::optional<std::u32string> decode(std::string_view text);

inline bool is_valid(std::string_view text) {
  return decode(text).has_value();
}

}  // namespace portcullis::utf8
