// What the sealed values a client holds share (the authorization code, tokens/sealed_code.h; the
// refresh token, tokens/sealed_refresh.h): the envelope and the encoding of their fields.
//
// The envelope (base64url without padding of the bytes):
//
//   12-byte random salt | crypto::MasterKey sealed value (0x01 | nonce | ciphertext | tag)
//
// sealed with the key HKDF-SHA-256(master key, salt, label), a key per value
// (crypto::MasterKey::derive_key), with the value's additional data. A key that seals one value
// never reuses a nonce, so the random-nonce bound of GCM does not apply, however many values a
// master key seals over the years. Each kind of value has its own label and additional data, so
// one kind never opens as another.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "crypto/aead.h"

namespace portcullis::oauth {

// The bytes of binding_digest(): a SHA-256 cut to 128 bits, which a sealed value carries instead
// of values that may be long (a CIMD client's id is a URL, a redirect URI too) and that are only
// compared with what a request gives.
inline constexpr size_t kBindingDigestBytes = 16;
std::string binding_digest(std::string_view value);

// The label of the per-value key and the additional data of one kind of sealed value.
struct SealedKind {
  std::string_view key_label;  // e.g. "portcullis.authorization-code.v1"
  std::string_view aad;        // e.g. "authorization_code"
  size_t max_chars = 0;        // a longer text is not opened at all
};

// `plaintext` in the envelope above. internal on a crypto failure.
Result<std::string> seal_value(const crypto::MasterKey& master_key, const SealedKind& kind,
                               std::string_view plaintext);
// The plaintext, or nullopt when `text` is not one that seal_value made for `kind` with this
// master key: too long, malformed, altered in any byte, or sealed under another key or kind. One
// answer for all of them, so a client learns nothing from which check failed.
std::optional<std::string> open_value(const crypto::MasterKey& master_key, const SealedKind& kind,
                                      std::string_view text);

// The plaintexts' fields: strings after their length in `width` bytes, integers as 64 bits, all
// big-endian. put_string is false when the length does not fit in `width` bytes.
bool put_string(std::string& out, std::string_view value, size_t width);
void put_int(std::string& out, int64_t value);

// Reads the fields put_string and put_int wrote, in order; any shortfall makes done() false.
class SealedReader {
 public:
  explicit SealedReader(std::string_view in) : in_(in) {}

  std::string bytes(size_t n);
  std::string string(size_t width);
  int64_t integer();
  // Every field read and nothing left over.
  bool done() const { return !failed_ && in_.empty(); }

 private:
  std::string fail();

  std::string_view in_;
  bool failed_ = false;
};

}  // namespace portcullis::oauth
