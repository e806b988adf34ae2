#include "crypto/kdf.h"

#include <openssl/crypto.h>

#include <cassert>

#include "crypto/hash.h"

namespace portcullis::crypto {

std::string hkdf_sha256(std::string_view ikm, std::string_view salt, std::string_view info,
                        size_t length) {
  assert(length <= kHkdfSha256MaxBytes);
  // HMAC pads a short key with zero bytes, so an empty salt already is RFC 5869's default of
  // HashLen zero bytes.
  std::string prk = hmac_sha256(salt, ikm);
  std::string out;
  out.reserve(length + kSha256Bytes);
  std::string block;  // T(i-1), empty for T(0)
  for (unsigned char counter = 1; out.size() < length; ++counter) {
    std::string input = block;
    input.append(info);
    input.push_back(static_cast<char>(counter));
    block = hmac_sha256(prk, input);
    out += block;
    OPENSSL_cleanse(input.data(), input.size());
  }
  OPENSSL_cleanse(prk.data(), prk.size());
  OPENSSL_cleanse(block.data(), block.size());
  out.resize(length);
  return out;
}

}  // namespace portcullis::crypto
