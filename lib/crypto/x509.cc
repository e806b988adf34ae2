#include "crypto/x509.h"

#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

#include "crypto/openssl_util.h"

namespace portcullis::crypto {

using internal::as_bytes;
using internal::openssl_failure;

Result<std::string> self_signed_certificate(const RsaPrivateKey& key, std::string_view common_name,
                                            int64_t not_before, int64_t not_after) {
  if (common_name.empty() || common_name.size() > 64 || not_after <= not_before) {
    return Status::invalid_argument("a certificate needs a common name and a validity period");
  }
  // The key through its storage form: RsaPrivateKey keeps its OpenSSL object to itself.
  PORTCULLIS_ASSIGN_OR_RETURN(std::string der, key.to_pkcs8_der());
  const unsigned char* cursor = as_bytes(der);
  internal::Pkcs8Ptr info(d2i_PKCS8_PRIV_KEY_INFO(nullptr, &cursor, static_cast<long>(der.size())));
  OPENSSL_cleanse(der.data(), der.size());
  internal::EvpPkeyPtr pkey(info ? EVP_PKCS82PKEY(info.get()) : nullptr);
  if (!pkey) return openssl_failure("reading the private key");

  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  internal::BignumPtr serial(BN_new());
  if (!cert || !serial || X509_set_version(cert.get(), X509_VERSION_3) != 1 ||
      BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) ||
      !ASN1_TIME_set(X509_getm_notBefore(cert.get()), static_cast<time_t>(not_before)) ||
      !ASN1_TIME_set(X509_getm_notAfter(cert.get()), static_cast<time_t>(not_after))) {
    return openssl_failure("X.509 certificate fields");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  const std::string cn(common_name);
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                 0) != 1 ||
      X509_set_issuer_name(cert.get(), name) != 1 || X509_set_pubkey(cert.get(), pkey.get()) != 1 ||
      X509_sign(cert.get(), pkey.get(), EVP_sha256()) <= 0) {
    return openssl_failure("X.509 certificate signing");
  }
  internal::BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert.get()) != 1) {
    return openssl_failure("writing certificate PEM");
  }
  char* data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  if (length <= 0 || !data) return openssl_failure("writing certificate PEM");
  return std::string(data, static_cast<size_t>(length));
}

}  // namespace portcullis::crypto
