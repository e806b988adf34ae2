#include "tokens/sealed_code.h"

#include <algorithm>

#include "crypto/base64.h"
#include "tokens/sealed_value.h"

namespace portcullis::oauth {
namespace {

constexpr unsigned char kPlaintextVersion = 1;
// Binds the sealed value to its use, on top of the key's own label. A code longer than
// max_chars (far above any code seal_code makes: a scope of 2,000 characters gives ≈2,800) is
// not opened at all.
constexpr SealedKind kCode{.key_label = "portcullis.authorization-code.v1",
                           .aad = "authorization_code",
                           .max_chars = 4096};
// An S256 challenge or a JWK thumbprint: the base64url of a SHA-256.
constexpr size_t kDigestBytes = 32;

// The bytes a base64url SHA-256 (a challenge, a thumbprint) is sent as, when it is one exactly
// as base64url_encode writes it; nullopt otherwise.
std::optional<std::string> digest_bytes(std::string_view text) {
  auto raw = crypto::base64url_decode(text);
  if (!raw || raw->size() != kDigestBytes) return std::nullopt;
  return raw;
}

}  // namespace

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
  SealedReader in(plaintext.substr(1));
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
  const std::optional<std::string> plaintext = encode_sealed_code(code);
  if (!plaintext) return Status::internal("an authorization code's field is out of bounds");
  return seal_value(master_key, kCode, *plaintext);
}

std::optional<SealedCode> open_code(const crypto::MasterKey& master_key, std::string_view code) {
  const std::optional<std::string> plaintext = open_value(master_key, kCode, code);
  if (!plaintext) return std::nullopt;
  return decode_sealed_code(*plaintext);
}

}  // namespace portcullis::oauth
