// PKCE (RFC 7636), S256 only (contract §3, §4).
#pragma once

#include <string_view>

namespace portcullis::oauth {

// A code_challenge as S256 produces it: 43 base64url characters.
bool is_valid_code_challenge(std::string_view challenge);
// A code_verifier: 43–128 characters of [A-Za-z0-9-._~].
bool is_valid_code_verifier(std::string_view verifier);
// BASE64URL(SHA256(verifier)) == challenge, compared in constant time.
bool verifier_matches_challenge(std::string_view verifier, std::string_view challenge);

}  // namespace portcullis::oauth
