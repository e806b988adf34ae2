#define BOOST_TEST_MODULE sealed_code
#include "tokens/sealed_code.h"

#include <boost/test/unit_test.hpp>

#include "crypto/base64.h"
#include "crypto/random.h"

using namespace portcullis;
using namespace portcullis::oauth;

namespace {

crypto::MasterKey fresh_key() {
  return crypto::MasterKey::from_base64(crypto::base64_encode(crypto::random_bytes(32))).value();
}

SealedCode sample(bool dpop) {
  SealedCode c;
  c.grant_id = "grt_01jd3k00000000000000000000";
  c.client_digest = binding_digest("dcr_01jd3k0000000000000000000a");
  c.redirect_uri_digest = binding_digest("http://127.0.0.1:3000/callback");
  c.resource_id = "res_01jd3k00000000000000000000";
  c.user_id = "usr_01jd3k00000000000000000000";
  c.code_challenge = crypto::base64url_encode(crypto::random_bytes(32));
  c.scope = "todo:read todo:write";
  if (dpop) c.dpop_jkt = crypto::base64url_encode(crypto::random_bytes(32));
  c.auth_time = 1'800'000'000;
  c.expires_at = 1'800'000'060;
  return c;
}

void require_equal(const SealedCode& a, const SealedCode& b) {
  BOOST_TEST(a.grant_id == b.grant_id);
  BOOST_TEST(a.client_digest == b.client_digest);
  BOOST_TEST(a.redirect_uri_digest == b.redirect_uri_digest);
  BOOST_TEST(a.resource_id == b.resource_id);
  BOOST_TEST(a.user_id == b.user_id);
  BOOST_TEST(a.code_challenge == b.code_challenge);
  BOOST_TEST(a.scope == b.scope);
  BOOST_TEST(a.organization_id == b.organization_id);
  BOOST_TEST(a.dpop_jkt == b.dpop_jkt);
  BOOST_TEST(a.auth_time == b.auth_time);
  BOOST_TEST(a.expires_at == b.expires_at);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_sealed_code_opens_to_what_was_sealed_and_stays_short) {
  const crypto::MasterKey key = fresh_key();
  for (bool dpop : {false, true}) {
    const SealedCode code = sample(dpop);
    auto sealed = seal_code(key, code);
    BOOST_REQUIRE(sealed.is_ok());
    // What a redirect carries (docs/oauth.md): base64url, a few hundred characters.
    BOOST_TEST(sealed->size() < 400u, sealed->size());
    BOOST_TEST(sealed->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789-_") == std::string::npos);
    auto opened = open_code(key, *sealed);
    BOOST_REQUIRE(opened.has_value());
    require_equal(*opened, code);
    // Two seals of the same content differ (a salt and a key of their own each).
    BOOST_TEST(*seal_code(key, code) != *sealed);
  }
}

BOOST_AUTO_TEST_CASE(an_altered_truncated_or_foreign_code_does_not_open) {
  const crypto::MasterKey key = fresh_key();
  const std::string sealed = seal_code(key, sample(true)).value();
  // Every character changed, one at a time.
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string altered = sealed;
    altered[i] = altered[i] == 'A' ? 'B' : 'A';
    BOOST_TEST(!open_code(key, altered).has_value(), "character " << i);
  }
  BOOST_TEST(!open_code(key, sealed.substr(0, sealed.size() - 1)).has_value());
  BOOST_TEST(!open_code(key, sealed.substr(0, 20)).has_value());
  BOOST_TEST(!open_code(key, sealed + "A").has_value());
  BOOST_TEST(!open_code(key, "").has_value());
  BOOST_TEST(!open_code(key, "not-a-code").has_value());
  BOOST_TEST(!open_code(key, std::string(100000, 'A')).has_value());
  // Sealed under another master key (another deployment, or a key that was replaced).
  BOOST_TEST(!open_code(fresh_key(), sealed).has_value());
}

BOOST_AUTO_TEST_CASE(the_plaintext_decodes_only_as_encoded) {
  for (bool dpop : {false, true}) {
    const SealedCode code = sample(dpop);
    const std::string plain = encode_sealed_code(code).value();
    auto decoded = decode_sealed_code(plain);
    BOOST_REQUIRE(decoded.has_value());
    require_equal(*decoded, code);
    for (size_t n = 0; n < plain.size(); ++n) {
      BOOST_TEST(!decode_sealed_code(plain.substr(0, n)).has_value(), "prefix of " << n);
    }
    BOOST_TEST(!decode_sealed_code(plain + '\0').has_value());
    std::string other_version = plain;
    other_version[0] = 2;
    BOOST_TEST(!decode_sealed_code(other_version).has_value());
  }
  // A challenge that is not the base64url of a SHA-256 as written travels as text, and back.
  SealedCode odd = sample(false);
  // 'd' sets a bit that base64url leaves 0 in a last character.
  odd.code_challenge = std::string(43, 'd');
  auto back = decode_sealed_code(encode_sealed_code(odd).value());
  BOOST_REQUIRE(back.has_value());
  BOOST_TEST(back->code_challenge == odd.code_challenge);
  // What does not fit is refused, not cut.
  SealedCode too_long = sample(false);
  too_long.user_id = std::string(256, 'u');
  BOOST_TEST(!encode_sealed_code(too_long).has_value());
  SealedCode bad_digest = sample(false);
  bad_digest.client_digest.pop_back();
  BOOST_TEST(!encode_sealed_code(bad_digest).has_value());
  SealedCode bad_jkt = sample(true);
  bad_jkt.dpop_jkt = "not-a-thumbprint";
  BOOST_TEST(!encode_sealed_code(bad_jkt).has_value());
  BOOST_TEST(!seal_code(fresh_key(), bad_jkt).is_ok());
}
