#include "format/utf8.h"

namespace portcullis::utf8 {

std::optional<std::u32string> decode(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      out.push_back(lead);
      ++i;
      continue;
    }
    // The sequence length and the smallest code point it may encode (anything smaller is an
    // overlong form, a classic filter bypass).
    size_t length;
    char32_t min;
    char32_t cp;
    if ((lead & 0xe0) == 0xc0) {
      length = 2;
      min = 0x80;
      cp = lead & 0x1f;
    } else if ((lead & 0xf0) == 0xe0) {
      length = 3;
      min = 0x800;
      cp = lead & 0x0f;
    } else if ((lead & 0xf8) == 0xf0) {
      length = 4;
      min = 0x10000;
      cp = lead & 0x07;
    } else {
      return std::nullopt;  // a continuation byte, or 0xf8..0xff
    }
    if (text.size() - i < length) return std::nullopt;
    for (size_t k = 1; k < length; ++k) {
      auto c = static_cast<unsigned char>(text[i + k]);
      if ((c & 0xc0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return std::nullopt;
    out.push_back(cp);
    i += length;
  }
  return out;
}

}  // namespace portcullis::utf8
