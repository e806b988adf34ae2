#include "crypto/openssl_util.h"

#include <openssl/err.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace portcullis::crypto::internal {

Status openssl_failure(std::string_view operation) {
  std::string message = "OpenSSL failure in ";
  message += operation;
  if (unsigned long code = ERR_get_error(); code != 0) {
    char reason[256];
    ERR_error_string_n(code, reason, sizeof reason);
    message += " (";
    message += reason;
    message += ")";
  }
  ERR_clear_error();
  return Status::internal(std::move(message));
}

Result<EvpPkeyPtr> pkcs8_der_to_key(std::string_view der, size_t max_bytes) {
  if (der.empty() || der.size() > max_bytes) {
    return Status::invalid_argument("not a PKCS#8 DER private key");
  }
  const unsigned char* cursor = as_bytes(der);
  Pkcs8Ptr info(d2i_PKCS8_PRIV_KEY_INFO(nullptr, &cursor, static_cast<long>(der.size())));
  if (!info || cursor != as_bytes(der) + der.size()) {
    discard_openssl_errors();
    return Status::invalid_argument("not a PKCS#8 DER private key");
  }
  EvpPkeyPtr key(EVP_PKCS82PKEY(info.get()));
  if (!key) {
    discard_openssl_errors();
    return Status::invalid_argument("PKCS#8 DER does not hold a usable private key");
  }
  return key;
}

Result<std::string> key_to_pkcs8_der(const EVP_PKEY* key) {
  Pkcs8Ptr info(EVP_PKEY2PKCS8(key));
  const int length = info ? i2d_PKCS8_PRIV_KEY_INFO(info.get(), nullptr) : -1;
  if (length <= 0) return openssl_failure("encoding PKCS#8");
  std::string der(static_cast<size_t>(length), '\0');
  unsigned char* cursor = as_bytes(der);
  if (i2d_PKCS8_PRIV_KEY_INFO(info.get(), &cursor) != length) {
    return openssl_failure("encoding PKCS#8");
  }
  return der;
}

void discard_openssl_errors() {
  ERR_clear_error();
}

void die_on_crypto_failure(std::string_view operation) {
  std::fprintf(stderr, "portcullis: fatal: OpenSSL failure in %.*s; aborting\n",
               static_cast<int>(operation.size()), operation.data());
  std::abort();
}

}  // namespace portcullis::crypto::internal
