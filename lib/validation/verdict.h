// What validating one request yields, as a value: the token's claims, or the reason it was
// refused, which decides the response (contract §6, seed §7):
//
//   kNoToken           401, WWW-Authenticate without error= (no Authorization header, or one
//                      of another scheme: RFC 6750 §3.1 "lacks any authentication information")
//   kInvalidToken      401, error="invalid_token" (malformed, bad signature, wrong iss/aud/typ,
//                      expired, not yet valid, revoked, DPoP proof refused)
//   kInsufficientScope 403, error="insufficient_scope" and the seed's JSON body
//   kUnavailable       503: the keys could not be fetched, so nothing can be said either way
//
// challenge.h turns a Verdict into those headers and bodies.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "validation/extractor.h"

namespace portcullis::validation {

// The claims of a verified access token (contract §4) that a resource server needs. Optional
// claims the token lacks are empty strings (0 for times).
struct AccessClaims {
  std::string iss;
  std::string aud;
  std::string sub;                  // usr_…
  std::string client_id;            // dcr_…, a CIMD URL, …
  std::string scope;                // space-separated, as issued
  std::vector<std::string> scopes;  // scope split, in token order
  std::string email;                // when present
  std::string org_id;               // when the user signed in through an organization
  std::string jti;
  int64_t exp = 0;
  int64_t iat = 0;
  int64_t nbf = 0;
  // RFC 9449 §6.1: SHA-256 thumbprint (base64url) of the key the token is bound to; empty for
  // an unbound (Bearer) token. A bound token is only valid with a DPoP proof by that key.
  std::string cnf_jkt;

  bool has_scope(std::string_view name) const;
};

enum class Outcome { kValid, kNoToken, kInvalidToken, kInsufficientScope, kUnavailable };

struct Verdict {
  Outcome outcome = Outcome::kNoToken;
  // Log-safe phrase for kInvalidToken/kUnavailable (never quotes the token).
  std::string reason;
  // kInsufficientScope: the required scopes the token lacks, space-separated.
  std::string missing_scope;
  // How the token was presented (meaningful once a token was extracted).
  TokenScheme scheme = TokenScheme::kBearer;
  // Set for kValid and kInsufficientScope (who was refused is worth logging). Shared so a
  // cache can hand the same claims to many requests without copying.
  std::shared_ptr<const AccessClaims> claims;

  bool valid() const { return outcome == Outcome::kValid; }
  // 200 for kValid, else 401, 403 or 503.
  int http_status() const;

  static Verdict refuse(Outcome outcome, std::string reason);
};

}  // namespace portcullis::validation
