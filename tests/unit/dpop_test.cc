#define BOOST_TEST_MODULE dpop
#include <boost/test/unit_test.hpp>

#include "crypto/base64.h"
#include "crypto/ec.h"
#include "crypto/rsa.h"
#include "db_fixture.h"
#include "dpop/htu.h"
#include "dpop/proof.h"
#include "dpop/proof_key.h"
#include "dpop/replay_cache.h"
#include "format/json.h"
#include "store/migrate.h"

using namespace portcullis;

namespace {

constexpr int64_t kIat = 1700000000;
constexpr const char* kUrl = "https://as.example/oauth/token";

// Made with Node's crypto (an independent implementation): ES256 and EdDSA proofs for
// POST https://as.example/oauth/token at kIat, and the RFC 7638 thumbprints of their keys.
constexpr const char* kEs256Proof =
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6IlI4ek5LSThzX2VxYl"
    "RQMmpDSlE0cHVtN3ZYTUc3MDIwNjF1aHdPZmd6dnciLCJ5IjoiMzFVWUxILXROaGFrcWtybS1RMUl4ZzduUWN4Wng1"
    "ZzMzbVpCbkZacC1NayIsImNydiI6IlAtMjU2In19.eyJqdGkiOiJFUzI1Ni12ZWN0b3IiLCJodG0iOiJQT1NUIiwiaH"
    "R1IjoiaHR0cHM6Ly9hcy5leGFtcGxlL29hdXRoL3Rva2VuIiwiaWF0IjoxNzAwMDAwMDAwfQ.hchO1f8o6dHgR3nQF"
    "gjt0O_IVPCFPq3oghmYyTn2f4BI1AheLz3ylZIEhndPD0eMSUMrOGULq38rEHXMpPWeow";
constexpr const char* kEs256Jkt = "Gkks_fnBsPKseSo2s9O6vY8wD5Zubc_9cKcaoYwpwKQ";
constexpr const char* kEdDsaProof =
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVkRFNBIiwiandrIjp7ImNydiI6IkVkMjU1MTkiLCJ4IjoiS2xEb3NmUG"
    "JyOF84cHFGWnB1Rm01eGFPeE1GRThSTkY5RmFGal9ZN01TayIsImt0eSI6Ik9LUCJ9fQ.eyJqdGkiOiJFZERTQS12ZW"
    "N0b3IiLCJodG0iOiJQT1NUIiwiaHR1IjoiaHR0cHM6Ly9hcy5leGFtcGxlL29hdXRoL3Rva2VuIiwiaWF0IjoxNzAw"
    "MDAwMDAwfQ.7h-XSslY_TAv0EeX1k7ddToGFyXn2AOj0d33t2wNg0nIA15L1RH_9UivwBsUts2hWgbo7575X3pZEb-u"
    "tpbFDw";
constexpr const char* kEdDsaJkt = "fcVRk6XboR_EHthWpeMxRay_I0e8U9AQnTT-6louQFU";

dpop::ProofRequest request_at(int64_t now, std::string_view url = kUrl,
                              std::string_view method = "POST") {
  dpop::ProofRequest r;
  r.method = method;
  r.url = url;
  r.now = now;
  return r;
}

const crypto::RsaPrivateKey& rsa_key() {
  static const crypto::RsaPrivateKey key = crypto::RsaPrivateKey::generate(2048).value();
  return key;
}

Json::Value rsa_jwk(const crypto::RsaPrivateKey& key) {
  Json::Value jwk(Json::objectValue);
  jwk["kty"] = "RSA";
  jwk["n"] = crypto::base64url_encode(key.public_key().n());
  jwk["e"] = crypto::base64url_encode(key.public_key().e());
  return jwk;
}

Json::Value rs256_header() {
  Json::Value h(Json::objectValue);
  h["typ"] = "dpop+jwt";
  h["alg"] = "RS256";
  h["jwk"] = rsa_jwk(rsa_key());
  return h;
}

Json::Value claims_for(std::string jti = "jti-1") {
  Json::Value c(Json::objectValue);
  c["jti"] = jti;
  c["htm"] = "POST";
  c["htu"] = kUrl;
  c["iat"] = static_cast<Json::Int64>(kIat);
  return c;
}

std::string sign_rs256(const Json::Value& header, const Json::Value& claims) {
  std::string input = crypto::base64url_encode(json::write(header)) + "." +
                      crypto::base64url_encode(json::write(claims));
  return input + "." + crypto::base64url_encode(rsa_key().sign_rs256(input).value());
}

void expect_refused(const Result<dpop::VerifiedProof>& r, const std::string& fragment) {
  BOOST_REQUIRE(!r.is_ok());
  BOOST_TEST(r.status().reason() == "invalid_dpop_proof");
  BOOST_TEST(r.status().message().find(fragment) != std::string::npos, r.status().message());
}

}  // namespace

BOOST_AUTO_TEST_CASE(es256_and_eddsa_proofs_from_another_implementation_verify) {
  auto es = dpop::verify_proof(kEs256Proof, request_at(kIat));
  BOOST_REQUIRE_MESSAGE(es.is_ok(), es.status().to_string());
  BOOST_TEST(es->jkt == kEs256Jkt);
  BOOST_TEST(es->jti == "ES256-vector");
  BOOST_TEST(es->iat == kIat);
  BOOST_TEST(es->replay_window_end == kIat + 61);
  auto ed = dpop::verify_proof(kEdDsaProof, request_at(kIat));
  BOOST_REQUIRE_MESSAGE(ed.is_ok(), ed.status().to_string());
  BOOST_TEST(ed->jkt == kEdDsaJkt);

  // One flipped signature bit is refused, for both algorithms.
  for (std::string proof : {std::string(kEs256Proof), std::string(kEdDsaProof)}) {
    char& c = proof[proof.size() - 5];
    c = c == 'A' ? 'B' : 'A';
    expect_refused(dpop::verify_proof(proof, request_at(kIat)), "signature");
  }
}

BOOST_AUTO_TEST_CASE(iat_window_is_inclusive_and_configurable) {
  BOOST_TEST(dpop::verify_proof(kEs256Proof, request_at(kIat + 60)).is_ok());
  BOOST_TEST(dpop::verify_proof(kEs256Proof, request_at(kIat - 60)).is_ok());
  expect_refused(dpop::verify_proof(kEs256Proof, request_at(kIat + 61)), "too old");
  expect_refused(dpop::verify_proof(kEs256Proof, request_at(kIat - 61)), "future");
  dpop::ProofRequest wide = request_at(kIat + 300);
  wide.iat_leeway_seconds = 300;
  BOOST_TEST(dpop::verify_proof(kEs256Proof, wide).is_ok());

  Json::Value claims = claims_for();
  claims["iat"] = "1700000000";
  expect_refused(dpop::verify_proof(sign_rs256(rs256_header(), claims), request_at(kIat)),
                 "iat must be a number");
  claims["iat"] = kIat + 60.5;  // rounded towards rejection
  expect_refused(dpop::verify_proof(sign_rs256(rs256_header(), claims), request_at(kIat)),
                 "future");
}

BOOST_AUTO_TEST_CASE(rs256_proof_and_its_thumbprint) {
  auto r = dpop::verify_proof(sign_rs256(rs256_header(), claims_for()), request_at(kIat));
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  const auto& key = rsa_key().public_key();
  BOOST_TEST(r->jkt == dpop::jwk_thumbprint({{"e", crypto::base64url_encode(key.e())},
                                             {"kty", "RSA"},
                                             {"n", crypto::base64url_encode(key.n())}}));
  // A leading zero byte in n is the same key and the same thumbprint.
  Json::Value header = rs256_header();
  header["jwk"]["n"] = crypto::base64url_encode(std::string(1, '\0') + key.n());
  auto padded = dpop::verify_proof(sign_rs256(header, claims_for()), request_at(kIat));
  BOOST_REQUIRE(padded.is_ok());
  BOOST_TEST(padded->jkt == r->jkt);
}

BOOST_AUTO_TEST_CASE(header_rules) {
  auto with = [](const char* name, Json::Value value) {
    Json::Value h = rs256_header();
    h[name] = std::move(value);
    return dpop::verify_proof(sign_rs256(h, claims_for()), request_at(kIat));
  };
  expect_refused(with("typ", "JWT"), "typ");
  expect_refused(with("typ", "at+jwt"), "typ");
  BOOST_TEST(with("typ", "application/DPoP+JWT").is_ok());
  expect_refused(with("alg", "none"), "alg");
  expect_refused(with("alg", "HS256"), "alg");
  expect_refused(with("alg", "ES256"), "ES256 needs an EC P-256 jwk");
  expect_refused(with("crit", Json::Value(Json::arrayValue)), "crit");
  Json::Value private_jwk = rsa_jwk(rsa_key());
  private_jwk["d"] = "AQAB";
  expect_refused(with("jwk", private_jwk), "private");
  Json::Value symmetric = rsa_jwk(rsa_key());
  symmetric["k"] = "AQAB";
  expect_refused(with("jwk", symmetric), "private");
  Json::Value other_alg = rsa_jwk(rsa_key());
  other_alg["alg"] = "PS256";
  expect_refused(with("jwk", other_alg), "alg");
  expect_refused(with("jwk", "not an object"), "object");
  Json::Value h = rs256_header();
  h.removeMember("jwk");
  expect_refused(dpop::verify_proof(sign_rs256(h, claims_for()), request_at(kIat)), "jwk");
  // Signed with one key, claiming another.
  Json::Value foreign = rs256_header();
  foreign["jwk"] = rsa_jwk(crypto::RsaPrivateKey::generate(2048).value());
  expect_refused(dpop::verify_proof(sign_rs256(foreign, claims_for()), request_at(kIat)),
                 "signature");
  expect_refused(dpop::verify_proof("a.b", request_at(kIat)), "compact JWS");
  expect_refused(dpop::verify_proof("", request_at(kIat)), "compact JWS");
}

BOOST_AUTO_TEST_CASE(claim_rules) {
  auto with = [](const char* name, Json::Value value, dpop::ProofRequest request) {
    Json::Value c = claims_for();
    if (value.isNull()) {
      c.removeMember(name);
    } else {
      c[name] = std::move(value);
    }
    return dpop::verify_proof(sign_rs256(rs256_header(), c), request);
  };
  const auto at = request_at(kIat);
  expect_refused(with("jti", Json::Value(), at), "jti");
  expect_refused(with("jti", "", at), "jti");
  expect_refused(with("jti", std::string(257, 'j'), at), "jti");
  BOOST_TEST(with("jti", std::string(256, 'j'), at).is_ok());
  expect_refused(with("htm", "post", at), "htm");
  expect_refused(with("htm", "GET", at), "htm");
  expect_refused(with("htm", Json::Value(), at), "htm");
  expect_refused(with("htu", "https://as.example/oauth/revoke", at), "htu");
  expect_refused(with("htu", "http://as.example/oauth/token", at), "htu");
  expect_refused(with("htu", "https://other.example/oauth/token", at), "htu");
  expect_refused(with("htu", Json::Value(), at), "htu");
  // Query and fragment are ignored; RFC 3986 normalisation applies to both sides.
  BOOST_TEST(with("htu", "https://as.example/oauth/token?a=b#frag", at).is_ok());
  BOOST_TEST(with("htu", "HTTPS://AS.Example:443/oauth/./x/../%74oken", at).is_ok());
  BOOST_TEST(with("htu", kUrl, request_at(kIat, "https://as.example:443/oauth/token?x=1")).is_ok());
  expect_refused(with("htm", "POST", request_at(kIat, kUrl, "GET")), "htm");

  // ath is demanded and checked only when the proof accompanies an access token.
  dpop::ProofRequest with_token = at;
  with_token.access_token = "the-access-token";
  expect_refused(with("ath", Json::Value(), with_token), "ath");
  expect_refused(with("ath", dpop::access_token_hash("another-token"), with_token), "ath");
  BOOST_TEST(with("ath", dpop::access_token_hash("the-access-token"), with_token).is_ok());
  BOOST_TEST(dpop::access_token_hash("the-access-token").size() == 43);

  // A request this code cannot describe is the caller's mistake, not the client's.
  auto unusable = with("jti", "x", request_at(kIat, "not a url"));
  BOOST_REQUIRE(!unusable.is_ok());
  BOOST_TEST(unusable.status().reason() == "");
}

BOOST_AUTO_TEST_CASE(htu_normalisation) {
  auto n = [](std::string_view u) { return dpop::normalize_htu(u).value_or("<refused>"); };
  BOOST_TEST(n("https://as.example/oauth/token") == "https://as.example/oauth/token");
  BOOST_TEST(n("HTTPS://As.EXAMPLE/oauth/token") == "https://as.example/oauth/token");
  BOOST_TEST(n("https://as.example:443/p") == "https://as.example/p");
  BOOST_TEST(n("http://as.example:80/p") == "http://as.example/p");
  BOOST_TEST(n("http://as.example:0443/p") == "http://as.example:443/p");
  BOOST_TEST(n("https://as.example:8443/p") == "https://as.example:8443/p");
  BOOST_TEST(n("https://as.example") == "https://as.example/");
  BOOST_TEST(n("https://as.example?x") == "https://as.example/");
  BOOST_TEST(n("https://as.example/a/b/../c/./d") == "https://as.example/a/c/d");
  BOOST_TEST(n("https://as.example/../../a") == "https://as.example/a");
  BOOST_TEST(n("https://as.example/%7euser/%2f%41") == "https://as.example/~user/%2FA");
  BOOST_TEST(n("https://[::1]:8080/mcp") == "https://[::1]:8080/mcp");
  BOOST_TEST(n("https://as.example/p?q=1#f") == "https://as.example/p");
  for (const char* bad :
       {"ftp://as.example/p", "https:/as.example/p", "https://user@as.example/", "https:///p",
        "https://as.example/%zz", "https://as.example/%4", "https://as.example/a b",
        "https://as.example:99999/", "https://as.example:0/", "/relative", "",
        "https://as.example:44ttps://as/x", "https://as%2Eexample/", "https://[::1%25eth0]/",
        "https://a!b.example/"}) {
    BOOST_TEST(!dpop::normalize_htu(bad).has_value(), bad);
  }
  BOOST_TEST(!dpop::normalize_htu("https://as.example/" + std::string(4096, 'a')).has_value());
}

BOOST_AUTO_TEST_CASE(ec_keys_refuse_points_off_the_curve_and_short_signatures) {
  const std::string zeros(32, '\0');
  BOOST_TEST(!crypto::P256PublicKey::from_coordinates(zeros, zeros).is_ok());
  BOOST_TEST(!crypto::P256PublicKey::from_coordinates("short", zeros).is_ok());
  std::string x(32, '\x01'), y(32, '\x02');
  BOOST_TEST(!crypto::P256PublicKey::from_coordinates(x, y).is_ok());
  BOOST_TEST(!crypto::Ed25519PublicKey::from_bytes("short").is_ok());
  auto ed = crypto::Ed25519PublicKey::from_bytes(std::string(32, '\x07'));
  if (ed.is_ok()) BOOST_TEST(!ed->verify_eddsa("data", std::string(63, '\0')));
}

BOOST_AUTO_TEST_CASE(replay_cache_accepts_a_proof_once_across_workers) {
  auto config = testing::test_config();
  store::Db db(config->db);
  store::Db other_worker(config->db);
  BOOST_REQUIRE(store::migrate(db, store::embedded_migrations()).is_ok());
  BOOST_REQUIRE(db.execute("DELETE FROM dpop_proof_jtis").is_ok());
  dpop::ReplayCache a(db);
  dpop::ReplayCache b(other_worker);
  dpop::VerifiedProof proof{"jkt-1", "jti-1", kIat, kIat + 61};
  BOOST_TEST(a.remember(proof).is_ok());
  Status replay = b.remember(proof);
  BOOST_TEST(replay.code() == Code::kInvalidArgument);
  BOOST_TEST(replay.reason() == "invalid_dpop_proof");
  // The same jti under another key is another proof.
  dpop::VerifiedProof other_key{"jkt-2", "jti-1", kIat, kIat + 61};
  BOOST_TEST(b.remember(other_key).is_ok());
  BOOST_TEST(a.prune(kIat + 61).is_ok());
  BOOST_TEST((*db.query("SELECT COUNT(*) FROM dpop_proof_jtis"))[0].i64(0) == 2);
  BOOST_TEST(a.prune(kIat + 62).is_ok());
  BOOST_TEST((*db.query("SELECT COUNT(*) FROM dpop_proof_jtis"))[0].i64(0) == 0);
}
