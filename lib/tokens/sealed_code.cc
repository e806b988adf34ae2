#include "tokens/sealed_code.h"

#include <algorithm>

#include "crypto/base64.h"
#include "crypto/hash.h"
#include "crypto/random.h"

namespace portcullis::oauth {
namespace {

constexpr unsigned char kPlaintextVersion = 1;
constexpr size_t kSaltBytes = 12;
constexpr std::string_view kKeyLabel = "portcullis.authorization-code.v1";
// Binds the sealed value to its use, on top of the key's own label.
constexpr std::string_view kCodeAad = "authorization_code";
// Far above any code seal_code makes (a scope of 2,000 characters gives ≈2,800): a longer
// parameter is not opened at all.
constexpr size_t kMaxCodeChars = 4096;
// An S256 challenge or a JWK thumbprint: the base64url of a SHA-256.
constexpr size_t kDigestBytes = 32;

// `value` after its length in `width` bytes, big-endian; false when the length does not fit.
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

// The bytes a base64url SHA-256 (a challenge, a thumbprint) is sent as, when it is one exactly
// as base64url_encode writes it; nullopt otherwise.
std::optional<std::string> digest_bytes(std::string_view text) {
  auto raw = crypto::base64url_decode(text);
  if (!raw || raw->size() != kDigestBytes) return std::nullopt;
  return raw;
}

// Reads the fields of encode_sealed_code in order; any shortfall sets failed.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  std::string bytes(size_t n) {
    if (in_.size() < n) return fail();
    std::string out(in_.substr(0, n));
    in_.remove_prefix(n);
    return out;
  }

  std::string string(size_t width) {
    if (in_.size() < width) return fail();
    size_t n = 0;
    for (size_t i = 0; i < width; ++i) n = (n << 8) | static_cast<unsigned char>(in_[i]);
    in_.remove_prefix(width);
    return bytes(n);
  }

  int64_t integer() {
    const std::string b = bytes(8);
    uint64_t bits = 0;
    for (char c : b) bits = (bits << 8) | static_cast<unsigned char>(c);
    return static_cast<int64_t>(bits);
  }

  bool done() const { return !failed_ && in_.empty(); }

 private:
  std::string fail() {
    failed_ = true;
    in_ = {};
    return {};
  }

  std::string_view in_;
  bool failed_ = false;
};

}  // namespace

std::string binding_digest(std::string_view value) {
  return crypto::sha256(value).substr(0, kBindingDigestBytes);
}

std::optional<std::string> encode_sealed_code(const SealedCode& c) {
  if (c.client_digest.size() != kBindingDigestBytes ||
      c.redirect_uri_digest.size() != kBindingDigestBytes) {
    return std::nullopt;
  }
  // A challenge that is a base64url SHA-256 as it is written travels as its 32 bytes; anything
  // else (it cannot be 32 characters long: S256 challenges are 43) as its text.
  const std::optional<std::string> challenge = digest_bytes(c.code_challenge);
  if (!challenge && c.code_challenge.size() == kDigestBytes) return std::nullopt;
  std::optional<std::string> jkt;
  if (!c.dpop_jkt.empty()) {
    jkt = digest_bytes(c.dpop_jkt);
    if (!jkt) return std::nullopt;
  }
  std::string out;
  out.reserve(200 + c.scope.size());
  out.push_back(static_cast<char>(kPlaintextVersion));
  bool fits = put_string(out, c.grant_id, 1);
  out += c.client_digest;
  out += c.redirect_uri_digest;
  fits = fits && put_string(out, c.resource_id, 1) && put_string(out, c.user_id, 1) &&
         put_string(out, challenge.value_or(c.code_challenge), 1) && put_string(out, c.scope, 2) &&
         put_string(out, c.organization_id, 1) && put_string(out, jkt.value_or(""), 1);
  if (!fits) return std::nullopt;
  put_int(out, c.auth_time);
  put_int(out, c.expires_at);
  return out;
}

std::optional<SealedCode> decode_sealed_code(std::string_view plaintext) {
  if (plaintext.empty() || static_cast<unsigned char>(plaintext[0]) != kPlaintextVersion) {
    return std::nullopt;
  }
  Reader in(plaintext.substr(1));
  SealedCode c;
  c.grant_id = in.string(1);
  c.client_digest = in.bytes(kBindingDigestBytes);
  c.redirect_uri_digest = in.bytes(kBindingDigestBytes);
  c.resource_id = in.string(1);
  c.user_id = in.string(1);
  c.code_challenge = in.string(1);
  c.scope = in.string(2);
  c.organization_id = in.string(1);
  c.dpop_jkt = in.string(1);
  c.auth_time = in.integer();
  c.expires_at = in.integer();
  if (!in.done()) return std::nullopt;
  if (c.code_challenge.size() == kDigestBytes) {
    c.code_challenge = crypto::base64url_encode(c.code_challenge);
  } else if (digest_bytes(c.code_challenge)) {
    return std::nullopt;  // encode_sealed_code writes such a challenge as its bytes
  }
  if (!c.dpop_jkt.empty()) {
    if (c.dpop_jkt.size() != kDigestBytes) return std::nullopt;
    c.dpop_jkt = crypto::base64url_encode(c.dpop_jkt);
  }
  return c;
}

Result<std::string> seal_code(const crypto::MasterKey& master_key, const SealedCode& code) {
  const std::string salt = crypto::random_bytes(kSaltBytes);
  PORTCULLIS_ASSIGN_OR_RETURN(crypto::MasterKey key, master_key.derive_key(kKeyLabel, salt));
  const std::optional<std::string> plaintext = encode_sealed_code(code);
  if (!plaintext) return Status::internal("an authorization code's field is out of bounds");
  PORTCULLIS_ASSIGN_OR_RETURN(std::string sealed, key.seal(*plaintext, kCodeAad));
  return crypto::base64url_encode(salt + sealed);
}

std::optional<SealedCode> open_code(const crypto::MasterKey& master_key, std::string_view code) {
  if (code.size() > kMaxCodeChars) return std::nullopt;
  const std::optional<std::string> raw = crypto::base64url_decode(code);
  if (!raw || raw->size() <= kSaltBytes) return std::nullopt;
  const std::string_view bytes = *raw;
  auto key = master_key.derive_key(kKeyLabel, bytes.substr(0, kSaltBytes));
  if (!key) return std::nullopt;
  auto plaintext = key->open(bytes.substr(kSaltBytes), kCodeAad);
  if (!plaintext) return std::nullopt;
  return decode_sealed_code(*plaintext);
}

}  // namespace portcullis::oauth
