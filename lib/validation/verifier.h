// Verifying an access token for one resource (Envoy jwt_authn's "verifier"): the stages
//
//   extract (extractor.h) → signature + claims (verify_token) → DPoP proof (seam) → scopes
//
// each yielding a Verdict (verdict.h); challenge.h turns a refusal into the response of
// contract §6. Rules (contract §4, §6; RFC 9068):
//  - RS256, ES256 or EdDSA signature by the key the header's kid names (key_cache.h), with
//    that key's algorithm: a header alg other than the key's ("none", HS256, ES256 on an RSA
//    key) is refused; typ "at+jwt";
//  - iss byte-equal to the configured issuer (`{base_url}/resources/{resource_id}`);
//  - aud equal to the resource's server URL (a token of another resource is invalid here);
//  - exp / nbf / iat with `leeway_seconds` (at most 60) of clock skew;
//  - sub, client_id and jti present (jti keys the revocation deny-list);
//  - every required scope in the token's scope claim, else kInsufficientScope (403).
//
// DPoP seam (RFC 9449): a token bound to a key (cnf.jkt) or presented with the DPoP scheme is
// only valid with a proof. Without a ProofChecker such tokens are refused (kInvalidToken), so a
// stolen bound token is never accepted as a bearer token. A ProofChecker gets the verified
// claims (cnf_jkt, scheme) and the request facts, and returns the Verdict to continue with.
//
// Thread-safe when its KeySource is (JwksKeyCache is; KeyRingKeys is per-worker): verify may
// be called from many threads at once. It does no I/O except the key source's rare fetches.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "validation/key_cache.h"
#include "validation/token_cache.h"
#include "validation/verdict.h"

namespace portcullis::validation {

// Largest clock skew a verifier tolerates (contract §6).
inline constexpr int64_t kMaxLeewaySeconds = 60;

struct VerifierConfig {
  std::string issuer;    // `{base_url}/resources/{resource_id}`
  std::string audience;  // the resource's server URL, as registered
  int64_t leeway_seconds = kMaxLeewaySeconds;
};

// What a request offers beyond its token: the inputs of a DPoP proof check.
struct RequestFacts {
  std::optional<std::string_view> authorization;  // the Authorization header
  std::optional<std::string_view> dpop_proof;     // the DPoP header
  std::string_view method;                        // "GET", "POST", ...
  std::string_view url;                           // the request's absolute URL (htu)
};

class ProofChecker {
 public:
  virtual ~ProofChecker() = default;
  // Called for a token that passed signature and claims and is DPoP-bound or DPoP-presented.
  // `verified` is kValid with claims; return it to accept, or a kInvalidToken refusal.
  virtual Verdict check(Verdict verified, std::string_view token, const RequestFacts& request,
                        int64_t now) const = 0;
};

class Verifier {
 public:
  // invalid_argument when issuer or audience is empty, the leeway is outside 0..60, or keys is
  // null.
  static Result<std::shared_ptr<Verifier>> create(VerifierConfig config,
                                                  std::shared_ptr<KeySource> keys,
                                                  std::shared_ptr<const ProofChecker> proofs = {});
  // For a resource server outside Portcullis: keys from the issuer's JWKS URL
  // (`{base_url}/keys`) through a JwksKeyCache on lib/outbound.
  static Result<std::shared_ptr<Verifier>> for_jwks(VerifierConfig config, std::string jwks_url,
                                                    outbound::Options fetch_options = {});

  // The whole pipeline for one request. required_scopes may be empty. `cache`, when given,
  // remembers tokens that passed stage 2 (it is the caller's, one per thread: see
  // token_cache.h); stages 3 and 4 run on every call regardless.
  Verdict verify(const RequestFacts& request, const std::vector<std::string>& required_scopes,
                 int64_t now, TokenCache* cache = nullptr) const;
  // Shorthand without DPoP facts: the Authorization header's value (nullopt when absent).
  Verdict verify(std::optional<std::string_view> authorization,
                 const std::vector<std::string>& required_scopes, int64_t now) const;

  // Stage 2 alone: signature and claims of a bare token. Never kInsufficientScope; no DPoP
  // check (the caller must apply needs_proof()).
  Verdict verify_token(std::string_view token, int64_t now) const;

  // Stage 1's refusals: nullopt when a token was extracted, else the Verdict for its absence
  // (kNoToken) or malformation (kInvalidToken).
  static std::optional<Verdict> extraction_refusal(const ExtractedToken& extracted);
  // Does this verified token, presented with this scheme, need a DPoP proof?
  static bool needs_proof(const Verdict& verified);
  // Stage 4 alone: kValid when the claims hold every required scope, else kInsufficientScope
  // naming the missing ones.
  static Verdict check_scopes(Verdict verified, const std::vector<std::string>& required_scopes);

  const VerifierConfig& config() const { return config_; }

  // Only create() can name this type, so only create() constructs (after its checks).
  class Checked {
    friend class Verifier;
    Checked() = default;
  };
  Verifier(Checked, VerifierConfig config, std::shared_ptr<KeySource> keys,
           std::shared_ptr<const ProofChecker> proofs)
      : config_(std::move(config)), keys_(std::move(keys)), proofs_(std::move(proofs)) {}

 private:
  const VerifierConfig config_;
  const std::shared_ptr<KeySource> keys_;
  const std::shared_ptr<const ProofChecker> proofs_;
};

// The claims of a token whose signature and claims were already checked, as AccessClaims.
// kInvalidToken when sub, client_id or jti is missing or a claim has the wrong JSON type.
Verdict claims_from_json(const Json::Value& claims);

}  // namespace portcullis::validation
