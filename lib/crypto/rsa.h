// RSA keys for RS256 (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 §3.3).
//
// Keys are parsed once and held for a worker's lifetime: each object keeps an initialised
// OpenSSL signing or verifying context that every call copies, so no call re-parses the key or
// re-resolves the algorithms. Both classes are move-only; a moved-from key fails every
// operation. Const methods may be called from several threads at once.
//
// Only keys of 2048 to 16384 bits with an odd public exponent of 3 to 64 bits are accepted:
// smaller moduli are breakable, larger ones or exponents make each verification a DoS lever.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::crypto {

inline constexpr int kMinRsaBits = 2048;
inline constexpr int kMaxRsaBits = 16384;

class RsaPublicKey {
 public:
  // The key with modulus n and exponent e given as big-endian unsigned bytes, as in a JWK
  // (leading zero bytes are tolerated). invalid_argument when the key is outside the bounds
  // above or the modulus is even.
  static Result<RsaPublicKey> from_components(std::string_view n_bytes, std::string_view e_bytes);

  RsaPublicKey(RsaPublicKey&&) noexcept;
  RsaPublicKey& operator=(RsaPublicKey&&) noexcept;
  RsaPublicKey(const RsaPublicKey&) = delete;
  RsaPublicKey& operator=(const RsaPublicKey&) = delete;
  ~RsaPublicKey();

  // Big-endian bytes without leading zeros.
  const std::string& n() const;
  const std::string& e() const;
  int bits() const;

  // True only when sig is a valid RS256 signature of data under this key. The signature must
  // be exactly as long as the modulus. Every failure, including an OpenSSL error, is false.
  bool verify_rs256(std::string_view data, std::string_view sig) const;

  // SubjectPublicKeyInfo PEM, for tools and for interop tests with the openssl CLI.
  Result<std::string> to_pem() const;

 private:
  friend class RsaPrivateKey;
  struct State;
  explicit RsaPublicKey(std::shared_ptr<const State> state);

  // Shared so a private key can hand out its public half without re-deriving it.
  std::shared_ptr<const State> state_;
};

class RsaPrivateKey {
 public:
  // A fresh key. invalid_argument when bits is outside [kMinRsaBits, kMaxRsaBits].
  static Result<RsaPrivateKey> generate(int bits = 2048);

  // Unencrypted PKCS#8 PrivateKeyInfo DER: the storage form, which the caller seals with the
  // MasterKey. invalid_argument for anything else (trailing bytes, other key types including
  // RSA-PSS, keys outside the bounds, or a key whose halves do not match).
  static Result<RsaPrivateKey> from_pkcs8_der(std::string_view der);
  // The private key in the clear: seal it at once and cleanse the string (OPENSSL_cleanse).
  Result<std::string> to_pkcs8_der() const;

  // PEM ("PRIVATE KEY" or "RSA PRIVATE KEY"), for tests and tools. Encrypted PEM is refused
  // rather than prompting for a passphrase. to_pem writes unencrypted PKCS#8.
  static Result<RsaPrivateKey> from_pem(std::string_view pem);
  Result<std::string> to_pem() const;

  // The raw RS256 signature of data (as long as the modulus). internal on OpenSSL failure.
  Result<std::string> sign_rs256(std::string_view data) const;

  // Shares this key's public half; on a moved-from key, a key that verifies nothing.
  RsaPublicKey public_key() const;
  int bits() const;

  RsaPrivateKey(RsaPrivateKey&&) noexcept;
  RsaPrivateKey& operator=(RsaPrivateKey&&) noexcept;
  RsaPrivateKey(const RsaPrivateKey&) = delete;
  RsaPrivateKey& operator=(const RsaPrivateKey&) = delete;
  ~RsaPrivateKey();

 private:
  struct State;
  explicit RsaPrivateKey(std::unique_ptr<const State> state);

  std::unique_ptr<const State> state_;
};

}  // namespace portcullis::crypto
