#include "dpop/proof.h"

#include <algorithm>

#include "crypto/base64.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "dpop/htu.h"
#include "dpop/proof_key.h"
#include "format/json.h"
#include "jose/claims.h"
#include "jose/jwt.h"

namespace portcullis::dpop {
namespace {

std::optional<std::string> string_member(const Json::Value& object, std::string_view name) {
  const Json::Value* member = json::find_member(object, name);
  if (member == nullptr || !member->isString()) return std::nullopt;
  return member->asString();
}

Result<ProofKey> check_header(const Json::Value& header) {
  const std::optional<std::string> typ = string_member(header, "typ");
  if (!typ || !jose::typ_names(*typ, "dpop+jwt")) {
    return invalid_proof("DPoP proof typ must be dpop+jwt");
  }
  const std::optional<std::string> alg = string_member(header, "alg");
  if (!alg ||
      std::find(kProofAlgorithms.begin(), kProofAlgorithms.end(), *alg) == kProofAlgorithms.end()) {
    return invalid_proof("DPoP proof alg must be one of ES256, RS256, EdDSA");
  }
  if (json::find_member(header, "crit") != nullptr) {
    return invalid_proof("DPoP proof header has crit, which is not supported");
  }
  const Json::Value* jwk = json::find_member(header, "jwk");
  if (jwk == nullptr) return invalid_proof("DPoP proof has no jwk header");
  Result<ProofKey> key = ProofKey::from_jwk(*jwk, *alg);
  if (!key) return invalid_proof("DPoP proof " + key.status().message());
  return key;
}

Status check_iat(const Json::Value& claims, const ProofRequest& request, VerifiedProof& out) {
  const Json::Value* iat = json::find_member(claims, "iat");
  if (iat == nullptr) return invalid_proof("DPoP proof has no iat claim");
  const std::optional<int64_t> earliest = jose::numeric_date(*iat, /*round_up=*/false);
  const std::optional<int64_t> latest = jose::numeric_date(*iat, /*round_up=*/true);
  if (!earliest || !latest) return invalid_proof("DPoP proof iat must be a number");
  // Saturating: neither a hostile iat nor an extreme clock may overflow.
  if (*latest > jose::saturating_add(request.now, request.iat_leeway_seconds)) {
    return invalid_proof("DPoP proof iat is in the future");
  }
  if (*earliest < jose::saturating_add(request.now, -request.iat_leeway_seconds)) {
    return invalid_proof("DPoP proof is too old (iat)");
  }
  out.iat = *earliest;
  out.replay_window_end =
      jose::saturating_add(jose::saturating_add(*latest, request.iat_leeway_seconds), 1);
  return Status::ok();
}

}  // namespace

Status invalid_proof(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_dpop_proof");
}

std::string access_token_hash(std::string_view access_token) {
  return crypto::base64url_encode(crypto::sha256(access_token));
}

Result<VerifiedProof> verify_proof(std::string_view proof, const ProofRequest& request) {
  if (request.iat_leeway_seconds < 0) return Status::invalid_argument("DPoP leeway is negative");
  const std::optional<std::string> expected_htu = normalize_htu(request.url);
  if (!expected_htu) return Status::invalid_argument("the request URL is not an http(s) URL");

  Result<jose::DecodedJwt> decoded = jose::decode_compact_jws(proof);
  if (!decoded) return invalid_proof("DPoP proof is not a compact JWS");
  PORTCULLIS_ASSIGN_OR_RETURN(ProofKey key, check_header(decoded->header));
  if (!key.verify(decoded->signing_input, decoded->signature)) {
    return invalid_proof("DPoP proof signature is invalid");
  }

  const Json::Value& claims = decoded->claims;
  VerifiedProof out;
  const std::optional<std::string> jti = string_member(claims, "jti");
  if (!jti || jti->empty() || jti->size() > kMaxJtiBytes) {
    return invalid_proof("DPoP proof jti must be a string of 1 to 256 bytes");
  }
  const std::optional<std::string> htm = string_member(claims, "htm");
  if (!htm || *htm != request.method) {
    return invalid_proof("DPoP proof htm does not match the request method");
  }
  const std::optional<std::string> htu = string_member(claims, "htu");
  if (!htu) return invalid_proof("DPoP proof has no htu claim");
  const std::optional<std::string> presented_htu = normalize_htu(*htu);
  if (!presented_htu || *presented_htu != *expected_htu) {
    return invalid_proof("DPoP proof htu does not match the request URL");
  }
  PORTCULLIS_RETURN_IF_ERROR(check_iat(claims, request, out));
  if (request.access_token) {
    const std::optional<std::string> ath = string_member(claims, "ath");
    if (!ath) return invalid_proof("DPoP proof has no ath claim");
    if (!crypto::constant_time_equals(*ath, access_token_hash(*request.access_token))) {
      return invalid_proof("DPoP proof ath does not match the access token");
    }
  }
  out.jkt = key.thumbprint();
  out.jti = *jti;
  return out;
}

}  // namespace portcullis::dpop
