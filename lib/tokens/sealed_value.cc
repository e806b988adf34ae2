#include "tokens/sealed_value.h"

#include "crypto/base64.h"
#include "crypto/hash.h"
#include "crypto/random.h"

namespace portcullis::oauth {
namespace {

constexpr size_t kSaltBytes = 12;

}  // namespace

std::string binding_digest(std::string_view value) {
  return crypto::sha256(value).substr(0, kBindingDigestBytes);
}

Result<std::string> seal_value(const crypto::MasterKey& master_key, const SealedKind& kind,
                               std::string_view plaintext) {
  const std::string salt = crypto::random_bytes(kSaltBytes);
  PORTCULLIS_ASSIGN_OR_RETURN(crypto::MasterKey key, master_key.derive_key(kind.key_label, salt));
  PORTCULLIS_ASSIGN_OR_RETURN(std::string sealed, key.seal(plaintext, kind.aad));
  return crypto::base64url_encode(salt + sealed);
}

std::optional<std::string> open_value(const crypto::MasterKey& master_key, const SealedKind& kind,
                                      std::string_view text) {
  if (text.size() > kind.max_chars) return std::nullopt;
  const std::optional<std::string> raw = crypto::base64url_decode(text);
  if (!raw || raw->size() <= kSaltBytes) return std::nullopt;
  const std::string_view bytes = *raw;
  auto key = master_key.derive_key(kind.key_label, bytes.substr(0, kSaltBytes));
  if (!key) return std::nullopt;
  auto plaintext = key->open(bytes.substr(kSaltBytes), kind.aad);
  if (!plaintext) return std::nullopt;
  return std::move(plaintext).value();
}

bool put_string(std::string& out, std::string_view value, size_t width) {
  if (value.size() >= (size_t{1} << (8 * width))) return false;
  for (size_t i = width; i-- > 0;)
    out.push_back(static_cast<char>((value.size() >> (8 * i)) & 0xff));
  out.append(value);
  return true;
}

void put_int(std::string& out, int64_t value) {
  const auto bits = static_cast<uint64_t>(value);
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((bits >> shift) & 0xff));
  }
}

std::string SealedReader::bytes(size_t n) {
  if (in_.size() < n) return fail();
  std::string out(in_.substr(0, n));
  in_.remove_prefix(n);
  return out;
}

std::string SealedReader::string(size_t width) {
  if (in_.size() < width) return fail();
  size_t n = 0;
  for (size_t i = 0; i < width; ++i) n = (n << 8) | static_cast<unsigned char>(in_[i]);
  in_.remove_prefix(width);
  return bytes(n);
}

int64_t SealedReader::integer() {
  const std::string b = bytes(8);
  uint64_t bits = 0;
  for (char c : b) bits = (bits << 8) | static_cast<unsigned char>(c);
  return static_cast<int64_t>(bits);
}

std::string SealedReader::fail() {
  failed_ = true;
  in_ = {};
  return {};
}

}  // namespace portcullis::oauth
