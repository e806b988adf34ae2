// verify_proof (DPoP proofs: JWS header rules, EC/RSA/OKP JWK parsing, claims) and
// normalize_htu on hostile input.
//
// The input is used three ways: as a raw proof, as a URL for normalize_htu, and, when it holds
// exactly two NUL bytes, as the header JSON, claims JSON and signature bytes of a proof built
// from them, so the fuzzer can mutate the JSON (and the jwk in it) directly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "crypto/base64.h"
#include "dpop/htu.h"
#include "dpop/proof.h"

namespace {

using namespace portcullis;

void exercise(std::string_view proof) {
  for (const int64_t now : {int64_t{0}, int64_t{1700000000}, INT64_MIN, INT64_MAX}) {
    dpop::ProofRequest request;
    request.method = "POST";
    request.url = "https://as.example/oauth/token";
    request.now = now;
    request.access_token = std::string_view("token");
    const auto verified = dpop::verify_proof(proof, request);
    // Nothing the fuzzer writes can carry a valid signature over its own key by chance, but if
    // it does, the result must be well-formed.
    if (verified.is_ok() && (verified->jkt.size() != 43 || verified->jti.empty())) std::abort();
    if (!verified.is_ok() && verified.status().reason() != "invalid_dpop_proof") std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  exercise(input);
  if (auto normalized = dpop::normalize_htu(input)) {
    // Normalisation is idempotent: the normal form normalises to itself.
    if (dpop::normalize_htu(*normalized) != normalized) std::abort();
  }

  const size_t first = input.find('\0');
  if (first == std::string_view::npos) return 0;
  const size_t second = input.find('\0', first + 1);
  if (second == std::string_view::npos || input.find('\0', second + 1) != std::string_view::npos) {
    return 0;
  }
  std::string proof = crypto::base64url_encode(input.substr(0, first));
  proof += '.';
  proof += crypto::base64url_encode(input.substr(first + 1, second - first - 1));
  proof += '.';
  proof += crypto::base64url_encode(input.substr(second + 1));
  exercise(proof);
  return 0;
}
