// Secrets from OpenSSL's CSPRNG.
//
// These never fail: if the CSPRNG cannot deliver, the process aborts, because every caller
// would otherwise have to remember that a token could be predictable.
#pragma once

#include <cstddef>
#include <string>

namespace portcullis::crypto {

// `n` bytes from RAND_bytes.
std::string random_bytes(size_t n);

// `n_bytes` random bytes as base64url without padding, for tokens, codes and ids that travel
// in URLs and headers. Use at least 32 bytes for anything that grants access.
std::string random_token(size_t n_bytes);

}  // namespace portcullis::crypto
