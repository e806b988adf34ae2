#include "format/text.h"

namespace portcullis::text {

bool is_valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t extra;
    unsigned char lo = 0x80, hi = 0xBF;  // bounds of the first continuation byte
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return false;  // a continuation byte, an overlong lead (C0, C1) or F5..FF
    }
    if (i + extra >= s.size()) return false;  // truncated sequence
    if (byte(i + 1) < lo || byte(i + 1) > hi) return false;
    for (size_t k = 2; k <= extra; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return false;
    }
    i += extra + 1;
  }
  return true;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

bool has_control_characters(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) return true;
    // U+0080..U+009F are encoded as C2 80..C2 9F.
    if (c == 0xC2 && i + 1 < s.size()) {
      auto next = static_cast<unsigned char>(s[i + 1]);
      if (next >= 0x80 && next <= 0x9F) return true;
    }
  }
  return false;
}

std::optional<std::string> display_text_problem(std::string_view s, size_t max_chars) {
  if (!is_valid_utf8(s)) return "is not valid UTF-8";
  if (has_control_characters(s)) return "must not contain control characters";
  if (utf8_length(s) > max_chars) {
    return "is longer than " + std::to_string(max_chars) + " characters";
  }
  return std::nullopt;
}

Status check_display_text(std::string_view value, std::string_view field, size_t max_chars,
                          bool required) {
  if (auto problem = display_text_problem(value, max_chars)) {
    return Status::invalid_argument(std::string(field) + " " + *problem);
  }
  if (required && value.find_first_not_of(' ') == std::string_view::npos) {
    return Status::invalid_argument(std::string(field) + " must not be empty");
  }
  return Status::ok();
}

bool is_printable_ascii(std::string_view s) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F || c == '\\') return false;
  }
  return true;
}

}  // namespace portcullis::text
