#include "paging/page_token.h"

#include "crypto/base64.h"
#include "crypto/compare.h"
#include "crypto/hash.h"

namespace portcullis::paging {
namespace {

constexpr char kVersion = 0x01;
constexpr size_t kMacBytes = 16;  // 128 bits: forging needs 2^128 tries
// Longer than any token encode() makes (a DATETIME(6) and a 40-character id).
constexpr size_t kMaxTokenChars = 256;
// Separates these MACs from any other use of a key derived with the same label.
constexpr std::string_view kMacContext = "portcullis.page-token.v1";

Status invalid_token() {
  return Status::invalid_argument("page_token is not a token this listing issued");
}

// Length-prefixed, so ("ab", "c") and ("a", "bc") never authenticate the same bytes.
void append_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

// "2026-11-21 10:00:00.123456" and its shorter forms: digits, '-', ':', ' ', '.'.
bool is_datetime_text(std::string_view s) {
  if (s.size() < 19 || s.size() > 26) return false;
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || c == '-' || c == ':' || c == ' ' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool is_id_text(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

TokenCodec::TokenCodec(std::string key, Listing listing)
    : key_(std::move(key)), listing_(std::move(listing)) {}

Result<TokenCodec> TokenCodec::for_listing(const crypto::MasterKey& master_key, Listing listing) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string key, master_key.derive_subkey("paging-token.v1"));
  return TokenCodec(std::move(key), std::move(listing));
}

std::string TokenCodec::mac(std::string_view payload) const {
  std::string input;
  append_field(input, kMacContext);
  append_field(input, listing_.name);
  append_field(input, listing_.filter);
  append_field(input, payload);
  return crypto::hmac_sha256(key_, input).substr(0, kMacBytes);
}

std::string TokenCodec::encode(const PageToken& token) const {
  std::string payload;
  payload.push_back(kVersion);
  payload.push_back(token.direction == Direction::kForward ? 'f' : 'b');
  payload += token.position.create_time;
  payload.push_back('\0');
  payload += token.position.id;
  return crypto::base64url_encode(payload + mac(payload));
}

Result<PageToken> TokenCodec::decode(std::string_view text) const {
  if (text.size() > kMaxTokenChars) return invalid_token();
  auto raw = crypto::base64url_decode(text);
  if (!raw || raw->size() < 2 + kMacBytes) return invalid_token();
  std::string_view bytes(*raw);
  std::string_view payload = bytes.substr(0, bytes.size() - kMacBytes);
  if (!crypto::constant_time_equals(mac(payload), bytes.substr(payload.size()))) {
    return invalid_token();
  }
  // Authentic; the checks below guard against a bug in encode(), not against callers.
  if (payload[0] != kVersion || (payload[1] != 'f' && payload[1] != 'b')) return invalid_token();
  std::string_view rest = payload.substr(2);
  size_t nul = rest.find('\0');
  if (nul == std::string_view::npos) return invalid_token();
  PageToken token;
  token.direction = payload[1] == 'f' ? Direction::kForward : Direction::kBackward;
  token.position.create_time = std::string(rest.substr(0, nul));
  token.position.id = std::string(rest.substr(nul + 1));
  if (!is_datetime_text(token.position.create_time) || !is_id_text(token.position.id)) {
    return invalid_token();
  }
  return token;
}

}  // namespace portcullis::paging
