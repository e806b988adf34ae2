// DPoP proofs (RFC 9449 §4): a compact JWS with header typ "dpop+jwt", an asymmetric alg we
// accept (ES256, RS256, EdDSA) and the signer's public key as `jwk`; claims jti, htm, htu, iat,
// and ath when the proof accompanies an access token.
//
// verify_proof performs the stateless checks of §4.3 (all but the replay check, which
// ReplayCache does with the result, and the nonce, which this server never demands). It is
// pure and thread-safe, so the token endpoint and every resource-side validator share it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::dpop {

inline constexpr size_t kMaxJtiBytes = 256;
inline constexpr int64_t kDefaultIatLeewaySeconds = 60;

// What the proof must match: the request it came with.
struct ProofRequest {
  std::string_view method;  // the HTTP method as sent, e.g. "POST": htm must equal it exactly
  std::string_view url;     // the absolute URL the client addressed; query and fragment ignored
  int64_t now = 0;          // seconds since the epoch
  // iat must lie within [now - leeway, now + leeway]: the proof's lifetime and clock skew.
  int64_t iat_leeway_seconds = kDefaultIatLeewaySeconds;
  // Set when the proof accompanies an access token: ath must be access_token_hash(*token).
  std::optional<std::string_view> access_token;
};

struct VerifiedProof {
  std::string jkt;  // RFC 7638 thumbprint of the proof's key: what tokens are bound to
  std::string jti;
  int64_t iat = 0;
  // The proof passes the iat check until this time, so its jti must be remembered until then.
  int64_t replay_window_end = 0;
};

// The verified proof, or invalid_argument with reason "invalid_dpop_proof" naming the first
// rule that failed (the message never quotes the proof): not a compact JWS within 16 KiB; typ
// not dpop+jwt; alg not ES256/RS256/EdDSA; a crit header; a jwk that is missing, private,
// malformed or unfit for alg; a bad signature; jti missing, empty or over kMaxJtiBytes; htm not
// the method; htu not an http(s) URL equal to `url` after normalize_htu; iat not a number or
// outside the window; ath missing or wrong when an access token is given. invalid_argument
// without that reason when `request` itself is unusable (a url normalize_htu refuses, a
// negative leeway).
Result<VerifiedProof> verify_proof(std::string_view proof, const ProofRequest& request);

// base64url(SHA-256(ASCII(access_token))): the ath claim (RFC 9449 §4.2).
std::string access_token_hash(std::string_view access_token);

// The Status verify_proof and its callers use for a refused proof.
Status invalid_proof(std::string message);

}  // namespace portcullis::dpop
