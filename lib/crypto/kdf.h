// Key derivation: HKDF (RFC 5869) with HMAC-SHA-256.
//
// One secret (the master key) yields independent keys for unrelated uses — sealing keys at
// rest, MACs on page tokens — so a key compromised or misused in one place reveals nothing
// about another, and no second secret has to be provisioned and rotated.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace portcullis::crypto {

// The longest output HKDF-SHA-256 can produce (255 blocks).
inline constexpr size_t kHkdfSha256MaxBytes = 255 * 32;

// HKDF-Extract then HKDF-Expand: `length` bytes derived from the input keying material `ikm`,
// an optional `salt` (empty = RFC 5869's string of zero bytes) and the context `info`.
// REQUIRES: length <= kHkdfSha256MaxBytes.
std::string hkdf_sha256(std::string_view ikm, std::string_view salt, std::string_view info,
                        size_t length);

}  // namespace portcullis::crypto
