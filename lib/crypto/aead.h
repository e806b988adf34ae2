// Encryption at rest with the deployment's master key (AES-256-GCM).
//
// Sealed format, stored as-is in a VARBINARY column:
//
//   0x01 (format version) | 12-byte random nonce | ciphertext | 16-byte GCM tag
//
// The GCM additional data is the version byte followed by the caller's aad, so the version is
// authenticated too. Callers pass as aad what the value is bound to (for example
// "signing_key:<kid>"), so a sealed value copied into another row or column fails to open.
//
// Nonces are random: with one key, stay well below 2^32 seal() calls (NIST SP 800-38D §8.3).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::crypto {

class MasterKey {
 public:
  static constexpr size_t kKeyBytes = 32;
  static constexpr size_t kNonceBytes = 12;
  static constexpr size_t kTagBytes = 16;
  static constexpr unsigned char kFormatVersion = 0x01;
  // Bounds on what seal() accepts and open() considers; far above anything stored in a row.
  static constexpr size_t kMaxPlaintextBytes = 16 * 1024 * 1024;
  static constexpr size_t kMaxAadBytes = 64 * 1024;

  // Reads a key file holding the base64 of exactly 32 bytes (what `openssl rand -base64 32`
  // writes); whitespace around it is ignored. Fails with failed_precondition when the file
  // cannot be opened, is not a regular file, or is accessible by group or others (mode & 077):
  // a key anyone on the host can read protects nothing.
  static Result<MasterKey> load_file(const std::string& path);

  // The key from its base64 text, surrounding whitespace ignored. invalid_argument unless it
  // is valid padded base64 of exactly 32 bytes. Messages never include the text.
  static Result<MasterKey> from_base64(std::string_view text);

  MasterKey(MasterKey&&) noexcept;
  MasterKey& operator=(MasterKey&&) noexcept;
  MasterKey(const MasterKey&) = delete;  // one copy of the key in memory, not many
  MasterKey& operator=(const MasterKey&) = delete;
  ~MasterKey();  // zeroes the key bytes

  // Encrypts plaintext bound to aad, in the format above, with a fresh random nonce.
  // invalid_argument when plaintext or aad exceed the bounds; internal on OpenSSL failure;
  // failed_precondition on a moved-from key.
  Result<std::string> seal(std::string_view plaintext, std::string_view aad) const;

  // Decrypts what seal() produced with the same key and aad. unauthenticated when the input is
  // truncated, has another version byte, or fails the tag check (wrong key, wrong aad, any
  // modified byte); no plaintext is returned or kept in that case.
  Result<std::string> open(std::string_view sealed, std::string_view aad) const;

  // A 32-byte key for one purpose, derived with HKDF-SHA-256 from the master key and `label`
  // (for example "paging-token.v1"). Different labels give independent keys, and a derived key
  // reveals nothing about the master key, so it may be used where a leak is less contained
  // than the master key's own uses (an HMAC key held by every worker). failed_precondition on
  // a moved-from key.
  Result<std::string> derive_subkey(std::string_view label) const;

  // A sealing key of its own for one purpose and, with a random `salt`, for one value: HKDF-SHA-256
  // of the master key with `salt` and `label`. A key that seals a single value never reuses a
  // nonce, so values sealed this way have no 2^32 bound (the authorization codes of
  // lib/tokens/sealed_code.h: many, for years, under a master key that never changes).
  // failed_precondition on a moved-from key.
  Result<MasterKey> derive_key(std::string_view label, std::string_view salt) const;

 private:
  struct KeyBytes;
  explicit MasterKey(std::unique_ptr<KeyBytes> key);
  // HKDF-SHA-256 of the key's bytes (present: the callers check) with `salt` and `label`.
  std::string hkdf_of_key(std::string_view salt, std::string_view label) const;

  // Behind a pointer so a move hands over the one copy instead of duplicating it.
  std::unique_ptr<KeyBytes> key_;
};

}  // namespace portcullis::crypto
