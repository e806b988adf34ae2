#include "crypto/base64.h"

#include <array>
#include <cstdint>

namespace portcullis::crypto {
namespace {

constexpr std::string_view kStandardAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrlAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// Maps a character to its 6-bit value, or -1 when it is not in the alphabet (this includes '='
// and all whitespace, so the decoders reject them without a special case).
using DecodeTable = std::array<int8_t, 256>;

constexpr DecodeTable make_decode_table(std::string_view alphabet) {
  DecodeTable table{};
  table.fill(-1);
  for (size_t i = 0; i < alphabet.size(); ++i) {
    table[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}

constexpr DecodeTable kStandardTable = make_decode_table(kStandardAlphabet);
constexpr DecodeTable kUrlTable = make_decode_table(kUrlAlphabet);

uint32_t byte_at(std::string_view s, size_t i) {
  return static_cast<unsigned char>(s[i]);
}

std::string encode(std::string_view in, std::string_view alphabet, bool pad) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = byte_at(in, i) << 16 | byte_at(in, i + 1) << 8 | byte_at(in, i + 2);
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    out += alphabet[v >> 6 & 63];
    out += alphabet[v & 63];
  }
  const size_t remaining = in.size() - i;
  if (remaining == 1) {
    const uint32_t v = byte_at(in, i) << 16;
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    if (pad) out += "==";
  } else if (remaining == 2) {
    const uint32_t v = byte_at(in, i) << 16 | byte_at(in, i + 1) << 8;
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    out += alphabet[v >> 6 & 63];
    if (pad) out += '=';
  }
  return out;
}

// Decodes text that carries no padding. A final group of 2 or 3 characters encodes 1 or 2
// bytes; its unused low bits must be zero, otherwise several spellings would decode alike.
std::optional<std::string> decode_unpadded(std::string_view in, const DecodeTable& table) {
  if (in.size() % 4 == 1) return std::nullopt;  // 6 bits cannot carry a whole byte
  auto sextet = [&](size_t i) -> int { return table[static_cast<unsigned char>(in[i])]; };

  std::string out;
  out.reserve(in.size() / 4 * 3 + 2);
  size_t i = 0;
  for (; i + 4 <= in.size(); i += 4) {
    const int a = sextet(i), b = sextet(i + 1), c = sextet(i + 2), d = sextet(i + 3);
    if ((a | b | c | d) < 0) return std::nullopt;
    const uint32_t v = static_cast<uint32_t>(a << 18 | b << 12 | c << 6 | d);
    out += static_cast<char>(v >> 16 & 0xff);
    out += static_cast<char>(v >> 8 & 0xff);
    out += static_cast<char>(v & 0xff);
  }
  const size_t remaining = in.size() - i;
  if (remaining == 2) {
    const int a = sextet(i), b = sextet(i + 1);
    if ((a | b) < 0 || (b & 0x0f) != 0) return std::nullopt;
    out += static_cast<char>(a << 2 | b >> 4);
  } else if (remaining == 3) {
    const int a = sextet(i), b = sextet(i + 1), c = sextet(i + 2);
    if ((a | b | c) < 0 || (c & 0x03) != 0) return std::nullopt;
    const uint32_t v = static_cast<uint32_t>(a << 18 | b << 12 | c << 6);
    out += static_cast<char>(v >> 16 & 0xff);
    out += static_cast<char>(v >> 8 & 0xff);
  }
  return out;
}

}  // namespace

std::string base64url_encode(std::string_view bytes) {
  return encode(bytes, kUrlAlphabet, false);
}

std::optional<std::string> base64url_decode(std::string_view text) {
  return decode_unpadded(text, kUrlTable);
}

std::string base64_encode(std::string_view bytes) {
  return encode(bytes, kStandardAlphabet, true);
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') {
    ++padding;
  }
  // With the length a multiple of 4, one pad leaves a 3-character final group and two pads a
  // 2-character one, exactly what decode_unpadded expects. A third '=' stays in the data and is
  // rejected there as an invalid character.
  return decode_unpadded(text.substr(0, text.size() - padding), kStandardTable);
}

std::string hex_encode(std::string_view bytes) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 0x0f];
  }
  return out;
}

}  // namespace portcullis::crypto
