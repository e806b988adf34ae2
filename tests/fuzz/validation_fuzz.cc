// The validation pipeline on hostile input: the Authorization header (extractor), the token
// (decode, signature, claims), the scope check and the token cache. None may crash, leak or
// accept: the key below signs nothing the fuzzer can produce.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "format/json.h"
#include "validation/extractor.h"
#include "validation/verifier.h"

namespace {

using namespace portcullis;

class FixedKey final : public validation::KeySource {
 public:
  // k1 RS256, k2 ES256, k3 EdDSA: so every algorithm, and every header/key mismatch, is reached.
  FixedKey()
      : keys_{key(jose::JwsAlg::kRS256), key(jose::JwsAlg::kES256), key(jose::JwsAlg::kEdDSA)} {}
  Result<std::shared_ptr<const jose::JwsPublicKey>> find(std::string_view kid, int64_t) override {
    if (kid == "k1") return keys_[0];
    if (kid == "k2") return keys_[1];
    if (kid == "k3") return keys_[2];
    return std::shared_ptr<const jose::JwsPublicKey>();
  }

 private:
  static std::shared_ptr<const jose::JwsPublicKey> key(jose::JwsAlg alg) {
    return std::make_shared<const jose::JwsPublicKey>(
        jose::JwsPrivateKey::generate(alg).value().public_key().value());
  }
  std::shared_ptr<const jose::JwsPublicKey> keys_[3];
};

const validation::Verifier& verifier() {
  static const auto v = validation::Verifier::create({"https://auth.example.com/resources/res_1",
                                                      "https://mcp.example.com/mcp"},
                                                     std::make_shared<FixedKey>())
                            .value();
  return *v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  static validation::TokenCache cache(64);
  validation::RequestFacts request;
  request.authorization = input;
  const validation::Verdict verdict =
      verifier().verify(request, {"demo:read", "demo:write"}, 1'800'000'000, &cache);
  if (verdict.valid()) __builtin_trap();  // nothing unsigned may pass
  (void)validation::Verifier::extraction_refusal(validation::extract_token(input));
  // The claims reader on any JSON object the input parses to.
  if (auto json = json::parse(input); json && json->isObject()) {
    (void)validation::claims_from_json(*json);
  }
  return 0;
}
