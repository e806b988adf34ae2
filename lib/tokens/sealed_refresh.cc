#include "tokens/sealed_refresh.h"

#include "tokens/sealed_value.h"

namespace portcullis::oauth {
namespace {

constexpr unsigned char kPlaintextVersion = 1;
// A longer parameter is not opened at all: a sealed token is ≈300 characters, a scope of 2 000
// characters (the longest a resource's scopes allow in practice) makes it ≈3 000.
constexpr SealedKind kRefresh{
    .key_label = "portcullis.refresh-token.v1", .aad = "refresh_token", .max_chars = 4096};
// crypto::random_token(32): the base64url of 32 bytes.
constexpr size_t kStoredTokenChars = 43;

}  // namespace

std::optional<std::string> encode_sealed_refresh(const SealedRefresh& t) {
  if (t.client_digest.size() != kBindingDigestBytes) return std::nullopt;
  std::string out;
  out.reserve(256);
  out.push_back(static_cast<char>(kPlaintextVersion));
  if (!put_string(out, t.grant_id, 1)) return std::nullopt;
  put_int(out, t.generation);
  put_int(out, t.expires_at);
  out += t.client_digest;
  if (!put_string(out, t.user_id, 1) || !put_string(out, t.resource_id, 1) ||
      !put_string(out, t.scope, 2) || !put_string(out, t.organization_id, 1) ||
      !put_string(out, t.dpop_jkt, 1)) {
    return std::nullopt;
  }
  put_int(out, t.auth_time);
  put_int(out, t.absolute_expires_at);
  return out;
}

std::optional<SealedRefresh> decode_sealed_refresh(std::string_view plaintext) {
  if (plaintext.empty() || static_cast<unsigned char>(plaintext[0]) != kPlaintextVersion) {
    return std::nullopt;
  }
  SealedReader in(plaintext.substr(1));
  SealedRefresh t;
  t.grant_id = in.string(1);
  t.generation = in.integer();
  t.expires_at = in.integer();
  t.client_digest = in.bytes(kBindingDigestBytes);
  t.user_id = in.string(1);
  t.resource_id = in.string(1);
  t.scope = in.string(2);
  t.organization_id = in.string(1);
  t.dpop_jkt = in.string(1);
  t.auth_time = in.integer();
  t.absolute_expires_at = in.integer();
  if (!in.done()) return std::nullopt;
  return t;
}

bool is_stored_refresh_token(std::string_view token) {
  return token.size() == kStoredTokenChars;
}

Result<std::string> seal_refresh_token(const crypto::MasterKey& master_key,
                                       const SealedRefresh& token) {
  const std::optional<std::string> plaintext = encode_sealed_refresh(token);
  if (!plaintext) return Status::internal("a refresh token's field is out of bounds");
  return seal_value(master_key, kRefresh, *plaintext);
}

std::optional<SealedRefresh> open_refresh_token(const crypto::MasterKey& master_key,
                                                std::string_view token) {
  const std::optional<std::string> plaintext = open_value(master_key, kRefresh, token);
  if (!plaintext) return std::nullopt;
  return decode_sealed_refresh(*plaintext);
}

}  // namespace portcullis::oauth
