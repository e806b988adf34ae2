// The first stage of validating a request to a protected MCP server (Envoy jwt_authn's
// "extractor"): the Authorization header → the access token and the scheme it came in, or why
// there is none. No allocation; the token is a view into the header.
//
// Accepted (RFC 6750 §2.1, RFC 9449 §7.1): `Bearer <token>` and `DPoP <token>`, the scheme
// case-insensitive, one or more spaces, then a token68 (A-Z a-z 0-9 - . _ ~ + / followed by
// any '='), nothing after it.
#pragma once

#include <optional>
#include <string_view>

namespace portcullis::validation {

// How the client presented the token. kDPoP tokens must come with a DPoP proof header; the
// proof is checked by a later stage (see verifier.h, "DPoP seam").
enum class TokenScheme { kBearer, kDPoP };

enum class ExtractProblem {
  kNone,
  kMissing,    // no Authorization header, or an empty one
  kNotBearer,  // another scheme (Basic, Digest, ...): no access token was sent
  kMalformed,  // Bearer/DPoP without a well-formed token68
};

struct ExtractedToken {
  ExtractProblem problem = ExtractProblem::kMissing;
  TokenScheme scheme = TokenScheme::kBearer;
  std::string_view token;  // set when problem == kNone; points into the header

  bool ok() const { return problem == ExtractProblem::kNone; }
};

// `authorization`: the header's value, nullopt when the request has none.
ExtractedToken extract_token(std::optional<std::string_view> authorization);

}  // namespace portcullis::validation
