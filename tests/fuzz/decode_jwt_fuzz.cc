// decode_jwt, decode_jws, verify_jwt, verify_jws and check_claims on hostile tokens.
//
// The input is used twice: as a raw token, and, when it holds exactly two NUL bytes, as the
// header JSON, claims JSON and signature bytes of a token built from them. The second form lets
// the fuzzer mutate JSON directly instead of through base64url.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "crypto/base64.h"
#include "crypto/rsa.h"
#include "jose/claims.h"
#include "jose/jwt.h"

namespace {

using namespace portcullis;

// The RFC 7515 A.2 public key: any kid maps to it.
const crypto::RsaPublicKey& any_key() {
  static const crypto::RsaPublicKey key = [] {
    const auto n = crypto::base64url_decode(
        "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0B"
        "m4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5"
        "z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7"
        "aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ");
    if (!n) std::abort();
    return crypto::RsaPublicKey::from_components(*n, std::string_view("\x01\x00\x01", 3)).value();
  }();
  return key;
}

void exercise(std::string_view token) {
  const Result<jose::DecodedJwt> decoded = jose::decode_jwt(token);
  if (decoded.is_ok()) {
    if (!decoded->header.isObject() || !decoded->claims.isObject()) std::abort();
    if (token.substr(0, decoded->signing_input.size()) != decoded->signing_input) std::abort();
    for (const int64_t now : {int64_t{0}, int64_t{1300819300}, INT64_MIN, INT64_MAX}) {
      (void)jose::check_claims(*decoded,
                               jose::ClaimChecks{"joe", "aud", "JWT", now, /*leeway_seconds=*/60});
    }
  }
  const Result<jose::DecodedJwt> verified =
      jose::verify_jwt(token, [](std::string_view) { return &any_key(); });
  // Nothing the fuzzer writes can carry a valid signature except the RFC example itself.
  if (verified.is_ok() && !decoded.is_ok()) std::abort();

  // Any alg of the three: the header's alg must be an accepted one, and it is what decoded says.
  const Result<jose::DecodedJwt> any = jose::decode_jws(token);
  if (decoded.is_ok() && !any.is_ok()) std::abort();
  if (any.is_ok() && any->header["alg"].asString() != jose::alg_name(any->alg)) std::abort();
  // Every kid names an EC key: only an ES256 header can reach the signature check, and nothing
  // the fuzzer writes is signed by it.
  static const jose::JwsPublicKey ec_key =
      jose::JwsPrivateKey::generate(jose::JwsAlg::kES256).value().public_key().value();
  const Result<jose::DecodedJwt> by_ec =
      jose::verify_jws(token, [](std::string_view) { return &ec_key; });
  if (by_ec.is_ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  exercise(input);

  const size_t first = input.find('\0');
  if (first == std::string_view::npos) return 0;
  const size_t second = input.find('\0', first + 1);
  if (second == std::string_view::npos || input.find('\0', second + 1) != std::string_view::npos) {
    return 0;
  }
  std::string token = crypto::base64url_encode(input.substr(0, first));
  token += '.';
  token += crypto::base64url_encode(input.substr(first + 1, second - first - 1));
  token += '.';
  token += crypto::base64url_encode(input.substr(second + 1));
  exercise(token);
  return 0;
}
