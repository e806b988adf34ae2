// X.509 certificates made here: only self-signed ones, as containers for a public key that a
// peer pins (a SAML SP's signing and encryption keys in its metadata), never for a PKI.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "crypto/rsa.h"

namespace portcullis::crypto {

// A self-signed X.509 v3 certificate (PEM) of `key`, subject and issuer CN=common_name (1..64
// bytes), valid from not_before to not_after (Unix seconds), signed with SHA-256, with a random
// 127-bit serial. invalid_argument for a bad name or period; internal on OpenSSL failure.
Result<std::string> self_signed_certificate(const RsaPrivateKey& key, std::string_view common_name,
                                            int64_t not_before, int64_t not_after);

}  // namespace portcullis::crypto
