#include "crypto/hash.h"

#include <openssl/core_names.h>

#include "crypto/openssl_util.h"

namespace portcullis::crypto {
namespace {

// Fetching an algorithm takes a lock and a provider lookup; doing it once per process keeps
// that off the request path. Function-local statics make the first fetch thread-safe.
const EVP_MD* sha256_md() {
  static const internal::EvpMdPtr md(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  if (!md) internal::die_on_crypto_failure("EVP_MD_fetch(SHA256)");
  return md.get();
}

EVP_MAC* hmac_mac() {
  static const internal::EvpMacPtr mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) internal::die_on_crypto_failure("EVP_MAC_fetch(HMAC)");
  return mac.get();
}

}  // namespace

std::string sha256(std::string_view data) {
  std::string digest(kSha256Bytes, '\0');
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), internal::as_bytes(digest), &length, sha256_md(),
                 nullptr) != 1 ||
      length != kSha256Bytes) {
    internal::die_on_crypto_failure("SHA-256");
  }
  return digest;
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  internal::EvpMacCtxPtr ctx(EVP_MAC_CTX_new(hmac_mac()));
  if (!ctx) internal::die_on_crypto_failure("EVP_MAC_CTX_new");

  char digest_name[] = "SHA256";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
      OSSL_PARAM_construct_end(),
  };
  // EVP_MAC_init treats a null key as "keep the previous key", which a fresh context does not
  // have; an empty key must therefore be passed as a valid pointer with length 0.
  static constexpr unsigned char kNoKeyBytes = 0;
  const unsigned char* key_bytes = key.empty() ? &kNoKeyBytes : internal::as_bytes(key);
  std::string mac(kSha256Bytes, '\0');
  size_t length = 0;
  if (EVP_MAC_init(ctx.get(), key_bytes, key.size(), params) != 1 ||
      EVP_MAC_update(ctx.get(), internal::as_bytes(data), data.size()) != 1 ||
      EVP_MAC_final(ctx.get(), internal::as_bytes(mac), &length, mac.size()) != 1 ||
      length != kSha256Bytes) {
    internal::die_on_crypto_failure("HMAC-SHA256");
  }
  return mac;
}

}  // namespace portcullis::crypto
