// Base64 (RFC 4648 §4 and §5) and hex.
//
// The decoders are strict so that every byte string has exactly one accepted encoding: a token
// cannot be re-spelled to dodge a replay cache or a comparison of encoded forms.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace portcullis::crypto {

// base64url without padding, as JOSE and OAuth use it.
std::string base64url_encode(std::string_view bytes);

// Inverse of base64url_encode. nullopt for padding, whitespace, characters outside the
// base64url alphabet, a length of 1 mod 4, or non-zero unused bits in the last character.
std::optional<std::string> base64url_decode(std::string_view text);

// Standard base64 with padding, for HTTP Basic credentials and key files.
std::string base64_encode(std::string_view bytes);

// Inverse of base64_encode. nullopt unless the length is a multiple of 4, '=' appears only as
// one or two trailing pad characters, every other character is in the standard alphabet and the
// unused bits of the last character are zero.
std::optional<std::string> base64_decode(std::string_view text);

// Lower-case hex, two characters per byte.
std::string hex_encode(std::string_view bytes);

}  // namespace portcullis::crypto
