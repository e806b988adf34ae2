// SHA-256 and HMAC-SHA-256 over byte strings.
//
// Both return raw digests (32 bytes); hex_encode or base64url_encode them for display. They
// never fail: an OpenSSL without SHA-256 cannot run this server, so the process aborts.
#pragma once

#include <string>
#include <string_view>

namespace portcullis::crypto {

inline constexpr size_t kSha256Bytes = 32;

std::string sha256(std::string_view data);

// HMAC (RFC 2104) with SHA-256. Any key length is accepted, including empty.
std::string hmac_sha256(std::string_view key, std::string_view data);

}  // namespace portcullis::crypto
