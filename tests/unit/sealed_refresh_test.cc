#define BOOST_TEST_MODULE sealed_refresh
#include "tokens/sealed_refresh.h"

#include <boost/test/unit_test.hpp>

#include "crypto/base64.h"
#include "crypto/random.h"
#include "tokens/sealed_code.h"
#include "tokens/sealed_value.h"

using namespace portcullis;
using namespace portcullis::oauth;

namespace {

crypto::MasterKey fresh_key() {
  return crypto::MasterKey::from_base64(crypto::base64_encode(crypto::random_bytes(32))).value();
}

SealedRefresh sample() {
  return {.grant_id = "grt_01jd3k00000000000000000000",
          .generation = 41,
          .expires_at = 1'800'000'000,
          .client_digest = binding_digest("dcr_01jd3k0000000000000000000a"),
          .user_id = "usr_01jd3k00000000000000000000",
          .resource_id = "res_01jd3k00000000000000000000",
          .scope = "todo:read todo:write",
          .organization_id = "org_01jd3k00000000000000000000",
          .dpop_jkt = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I",
          .auth_time = 1'799'990'000,
          .absolute_expires_at = 1'807'000'000};
}

void require_equal(const SealedRefresh& a, const SealedRefresh& b) {
  BOOST_TEST(a.grant_id == b.grant_id);
  BOOST_TEST(a.generation == b.generation);
  BOOST_TEST(a.expires_at == b.expires_at);
  BOOST_TEST(a.client_digest == b.client_digest);
  BOOST_TEST(a.user_id == b.user_id);
  BOOST_TEST(a.resource_id == b.resource_id);
  BOOST_TEST(a.scope == b.scope);
  BOOST_TEST(a.organization_id == b.organization_id);
  BOOST_TEST(a.dpop_jkt == b.dpop_jkt);
  BOOST_TEST(a.auth_time == b.auth_time);
  BOOST_TEST(a.absolute_expires_at == b.absolute_expires_at);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_sealed_token_opens_to_what_was_sealed_and_is_told_from_a_stored_one) {
  const crypto::MasterKey key = fresh_key();
  auto sealed = seal_refresh_token(key, sample());
  BOOST_REQUIRE(sealed.is_ok());
  BOOST_TEST(sealed->size() < 400u, sealed->size());
  BOOST_TEST(sealed->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                       "0123456789-_") == std::string::npos);
  BOOST_TEST(!is_stored_refresh_token(*sealed));
  BOOST_TEST(is_stored_refresh_token(crypto::random_token(32)));
  auto opened = open_refresh_token(key, *sealed);
  BOOST_REQUIRE(opened.has_value());
  require_equal(*opened, sample());
  // Two seals of the same content differ (a salt and a key of their own each).
  BOOST_TEST(*seal_refresh_token(key, sample()) != *sealed);
}

BOOST_AUTO_TEST_CASE(an_altered_truncated_or_foreign_token_does_not_open) {
  const crypto::MasterKey key = fresh_key();
  const std::string sealed = seal_refresh_token(key, sample()).value();
  // Every character changed, one at a time: no altered token names a grant, so none can be
  // taken for a reuse that revokes it.
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string altered = sealed;
    altered[i] = altered[i] == 'A' ? 'B' : 'A';
    BOOST_TEST(!open_refresh_token(key, altered).has_value(), "character " << i);
  }
  BOOST_TEST(!open_refresh_token(key, sealed.substr(0, sealed.size() - 1)).has_value());
  BOOST_TEST(!open_refresh_token(key, sealed.substr(0, 20)).has_value());
  BOOST_TEST(!open_refresh_token(key, sealed + "A").has_value());
  BOOST_TEST(!open_refresh_token(key, "").has_value());
  BOOST_TEST(!open_refresh_token(key, std::string(100000, 'A')).has_value());
  // Sealed under another master key.
  BOOST_TEST(!open_refresh_token(fresh_key(), sealed).has_value());
  // An authorization code of the same key is not a refresh token, and the other way round:
  // each kind has its own key label and additional data.
  BOOST_TEST(!open_code(key, sealed).has_value());
  SealedCode code;
  code.grant_id = sample().grant_id;
  code.client_digest = sample().client_digest;
  code.redirect_uri_digest = sample().client_digest;
  code.expires_at = 1'800'000'000;
  BOOST_TEST(!open_refresh_token(key, seal_code(key, code).value()).has_value());
}

BOOST_AUTO_TEST_CASE(the_plaintext_decodes_only_as_encoded) {
  const std::string plain = encode_sealed_refresh(sample()).value();
  auto decoded = decode_sealed_refresh(plain);
  BOOST_REQUIRE(decoded.has_value());
  require_equal(*decoded, sample());
  for (size_t n = 0; n < plain.size(); ++n) {
    BOOST_TEST(!decode_sealed_refresh(plain.substr(0, n)).has_value(), "prefix of " << n);
  }
  BOOST_TEST(!decode_sealed_refresh(plain + '\0').has_value());
  std::string other_version = plain;
  other_version[0] = 2;
  BOOST_TEST(!decode_sealed_refresh(other_version).has_value());
  // What does not fit is refused, not cut.
  SealedRefresh too_long = sample();
  too_long.grant_id = std::string(256, 'g');
  BOOST_TEST(!encode_sealed_refresh(too_long).has_value());
  SealedRefresh bad_digest = sample();
  bad_digest.client_digest.pop_back();
  BOOST_TEST(!encode_sealed_refresh(bad_digest).has_value());
  BOOST_TEST(!seal_refresh_token(fresh_key(), bad_digest).is_ok());
  // A long granted scope still makes a token that opens.
  SealedRefresh wide = sample();
  wide.scope = std::string(2000, 's');
  const crypto::MasterKey key = fresh_key();
  auto opened = open_refresh_token(key, seal_refresh_token(key, wide).value());
  BOOST_REQUIRE(opened.has_value());
  BOOST_TEST(opened->scope == wide.scope);
}
