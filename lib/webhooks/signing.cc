#include "webhooks/signing.h"

#include "crypto/base64.h"
#include "crypto/hash.h"
#include "crypto/random.h"

namespace portcullis::webhooks {

constexpr std::string_view kPrefix = "whsec_";
constexpr size_t kKeyBytes = 24;

std::string new_secret() {
  return std::string(kPrefix) + crypto::base64_encode(crypto::random_bytes(kKeyBytes));
}

Result<std::string> secret_key(std::string_view secret) {
  if (secret.substr(0, kPrefix.size()) != kPrefix) {
    return Status::invalid_argument("not a webhook secret");
  }
  auto key = crypto::base64_decode(secret.substr(kPrefix.size()));
  if (!key || key->size() < 16) return Status::invalid_argument("not a webhook secret");
  return *key;
}

std::string sign(std::string_view key, std::string_view id, int64_t timestamp,
                 std::string_view body) {
  std::string content;
  content.reserve(id.size() + body.size() + 24);
  content.append(id);
  content += '.';
  content += std::to_string(timestamp);
  content += '.';
  content.append(body);
  return "v1," + crypto::base64_encode(crypto::hmac_sha256(key, content));
}

std::string signature_header(const std::vector<std::string>& keys, std::string_view id,
                             int64_t timestamp, std::string_view body) {
  std::string out;
  for (const std::string& key : keys) {
    if (!out.empty()) out += ' ';
    out += sign(key, id, timestamp, body);
  }
  return out;
}

}  // namespace portcullis::webhooks
