#include "oauth/pkce.h"

#include <cctype>

#include "crypto/base64.h"
#include "crypto/compare.h"
#include "crypto/hash.h"

namespace portcullis::oauth {
namespace {

bool is_unreserved(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

}  // namespace

bool is_valid_code_challenge(std::string_view challenge) {
  if (challenge.size() != 43) return false;
  for (char c : challenge) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  }
  return true;
}

bool is_valid_code_verifier(std::string_view verifier) {
  if (verifier.size() < 43 || verifier.size() > 128) return false;
  for (char c : verifier) {
    if (!is_unreserved(c)) return false;
  }
  return true;
}

bool verifier_matches_challenge(std::string_view verifier, std::string_view challenge) {
  return crypto::constant_time_equals(crypto::base64url_encode(crypto::sha256(verifier)),
                                      challenge);
}

}  // namespace portcullis::oauth
