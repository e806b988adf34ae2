// Elliptic-curve keys for JWS signatures (RFC 7518 §3.4, RFC 8037 §3.1): ES256 (ECDSA on P-256
// with SHA-256) and EdDSA (Ed25519). Public keys verify signatures clients make (DPoP proofs,
// RFC 9449) and access tokens; private keys sign access tokens of resources that chose these
// algorithms. Public keys are parsed strictly: a P-256 point must lie on the curve, and
// signatures have their fixed JWS length.
//
// The keys are immutable after parsing and move-only; const methods may run on several threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::crypto {

inline constexpr size_t kP256CoordinateBytes = 32;
inline constexpr size_t kEd25519KeyBytes = 32;

class P256PublicKey {
 public:
  // The point (x, y), each exactly 32 big-endian bytes as in a JWK. invalid_argument when the
  // point is not on the curve (or is the point at infinity).
  static Result<P256PublicKey> from_coordinates(std::string_view x, std::string_view y);

  // True only when sig is a JWS ES256 signature of data: r || s, 32 bytes each.
  bool verify_es256(std::string_view data, std::string_view sig) const;

  // The coordinates, 32 big-endian bytes each (empty on a moved-from key).
  const std::string& x() const;
  const std::string& y() const;

  P256PublicKey(P256PublicKey&&) noexcept;
  P256PublicKey& operator=(P256PublicKey&&) noexcept;
  ~P256PublicKey();

 private:
  struct State;
  explicit P256PublicKey(std::unique_ptr<const State> state);
  std::unique_ptr<const State> state_;
};

class Ed25519PublicKey {
 public:
  // The 32-byte public key of RFC 8032. invalid_argument for any other length.
  static Result<Ed25519PublicKey> from_bytes(std::string_view x);

  // True only when sig is a 64-byte Ed25519 signature of data.
  bool verify_eddsa(std::string_view data, std::string_view sig) const;

  // The 32 public key bytes (empty on a moved-from key).
  const std::string& x() const;

  Ed25519PublicKey(Ed25519PublicKey&&) noexcept;
  Ed25519PublicKey& operator=(Ed25519PublicKey&&) noexcept;
  ~Ed25519PublicKey();

 private:
  struct State;
  explicit Ed25519PublicKey(std::unique_ptr<const State> state);
  std::unique_ptr<const State> state_;
};

// The private halves. Storage form: unencrypted PKCS#8 DER, which the caller seals with the
// MasterKey (as for RsaPrivateKey). from_pkcs8_der refuses trailing bytes, other key types and,
// for P-256, other curves; a loaded key signs a probe its public half must verify.
class P256PrivateKey {
 public:
  static Result<P256PrivateKey> generate();
  static Result<P256PrivateKey> from_pkcs8_der(std::string_view der);
  // The private key in the clear: seal it at once and cleanse the string.
  Result<std::string> to_pkcs8_der() const;

  // The JWS ES256 signature of data: r || s, 32 bytes each. internal on OpenSSL failure.
  Result<std::string> sign_es256(std::string_view data) const;
  // A fresh copy of the public half.
  Result<P256PublicKey> public_key() const;

  P256PrivateKey(P256PrivateKey&&) noexcept;
  P256PrivateKey& operator=(P256PrivateKey&&) noexcept;
  ~P256PrivateKey();

 private:
  struct State;
  explicit P256PrivateKey(std::unique_ptr<const State> state);
  std::unique_ptr<const State> state_;
};

class Ed25519PrivateKey {
 public:
  static Result<Ed25519PrivateKey> generate();
  static Result<Ed25519PrivateKey> from_pkcs8_der(std::string_view der);
  // The private key in the clear: seal it at once and cleanse the string.
  Result<std::string> to_pkcs8_der() const;

  // The 64-byte Ed25519 signature of data. internal on OpenSSL failure.
  Result<std::string> sign_eddsa(std::string_view data) const;
  // A fresh copy of the public half.
  Result<Ed25519PublicKey> public_key() const;

  Ed25519PrivateKey(Ed25519PrivateKey&&) noexcept;
  Ed25519PrivateKey& operator=(Ed25519PrivateKey&&) noexcept;
  ~Ed25519PrivateKey();

 private:
  struct State;
  explicit Ed25519PrivateKey(std::unique_ptr<const State> state);
  std::unique_ptr<const State> state_;
};

}  // namespace portcullis::crypto
