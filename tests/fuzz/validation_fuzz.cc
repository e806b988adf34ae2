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
  FixedKey()
      : key_(std::make_shared<const crypto::RsaPublicKey>(
            crypto::RsaPrivateKey::generate(2048).value().public_key())) {}
  Result<std::shared_ptr<const crypto::RsaPublicKey>> find(std::string_view kid, int64_t) override {
    if (kid == "k1") return key_;
    return std::shared_ptr<const crypto::RsaPublicKey>();
  }

 private:
  std::shared_ptr<const crypto::RsaPublicKey> key_;
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
