// Internal to lib/crypto: RAII owners for OpenSSL objects and the one place OpenSSL's error
// queue is turned into a Status. Not for use outside lib/crypto.
#pragma once

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::crypto::internal {

template <auto Free>
struct OpenSslDeleter {
  template <typename T>
  void operator()(T* object) const {
    Free(object);
  }
};

using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<&BIO_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, OpenSslDeleter<&BN_free>>;
using EvpCipherPtr = std::unique_ptr<EVP_CIPHER, OpenSslDeleter<&EVP_CIPHER_free>>;
using EvpCipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, OpenSslDeleter<&EVP_CIPHER_CTX_free>>;
using EvpMacPtr = std::unique_ptr<EVP_MAC, OpenSslDeleter<&EVP_MAC_free>>;
using EvpMacCtxPtr = std::unique_ptr<EVP_MAC_CTX, OpenSslDeleter<&EVP_MAC_CTX_free>>;
using EvpMdPtr = std::unique_ptr<EVP_MD, OpenSslDeleter<&EVP_MD_free>>;
using EvpMdCtxPtr = std::unique_ptr<EVP_MD_CTX, OpenSslDeleter<&EVP_MD_CTX_free>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<&EVP_PKEY_free>>;
using EvpPkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, OpenSslDeleter<&EVP_PKEY_CTX_free>>;
using OsslParamBldPtr = std::unique_ptr<OSSL_PARAM_BLD, OpenSslDeleter<&OSSL_PARAM_BLD_free>>;
using OsslParamPtr = std::unique_ptr<OSSL_PARAM, OpenSslDeleter<&OSSL_PARAM_free>>;
using Pkcs8Ptr = std::unique_ptr<PKCS8_PRIV_KEY_INFO, OpenSslDeleter<&PKCS8_PRIV_KEY_INFO_free>>;

// An internal Status naming `operation` and OpenSSL's earliest queued reason. Clears the queue
// so the next operation on this thread does not inherit stale errors.
Status openssl_failure(std::string_view operation);

// For failures that are an expected answer (a bad signature, unparseable input): forgets them.
void discard_openssl_errors();

// For operations whose failure means the process cannot do cryptography at all (no entropy, no
// SHA-256 provider). Continuing would risk weak secrets, so the process stops.
[[noreturn]] void die_on_crypto_failure(std::string_view operation);

// An unencrypted PKCS#8 PrivateKeyInfo DER (nothing trailing, at most max_bytes) as a key of any
// type; invalid_argument for anything else. The caller checks the key's type.
Result<EvpPkeyPtr> pkcs8_der_to_key(std::string_view der, size_t max_bytes);
// The key as unencrypted PKCS#8 DER: the storage form, sealed by the caller at once.
Result<std::string> key_to_pkcs8_der(const EVP_PKEY* key);

inline const unsigned char* as_bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
inline unsigned char* as_bytes(std::string& s) {
  return reinterpret_cast<unsigned char*>(s.data());
}

}  // namespace portcullis::crypto::internal
