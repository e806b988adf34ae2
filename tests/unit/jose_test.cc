#define BOOST_TEST_MODULE jose
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "crypto/base64.h"
#include "crypto/hash.h"
#include "crypto/rsa.h"
#include "format/json.h"
#include "jose/claims.h"
#include "jose/jwk.h"
#include "jose/jwt.h"

namespace {

using namespace portcullis;
using namespace portcullis::jose;
using crypto::base64url_encode;
using crypto::RsaPrivateKey;
using crypto::RsaPublicKey;

// RFC 7515 Appendix A.2: the RSA key (public half) and the RS256 example token.
constexpr std::string_view kRfc7515Modulus =
    "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4"
    "QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdb"
    "BYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-"
    "DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ";
constexpr std::string_view kRfc7515Token =
    "eyJhbGciOiJSUzI1NiJ9"
    "."
    "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVl"
    "fQ"
    "."
    "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5"
    "jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L"
    "07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUi"
    "pUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw";

const RsaPrivateKey& signing_key() {
  static const RsaPrivateKey key = RsaPrivateKey::generate(2048).value();
  return key;
}

const RsaPrivateKey& other_key() {
  static const RsaPrivateKey key = RsaPrivateKey::generate(2048).value();
  return key;
}

// Only "k1" is known, and it is signing_key()'s public half.
KeyForKid known_keys() {
  static const RsaPublicKey k1 = signing_key().public_key();
  return [](std::string_view kid) -> const RsaPublicKey* { return kid == "k1" ? &k1 : nullptr; };
}

Json::Value parse(std::string_view text) {
  return json::parse(text).value();
}

// A token with the given header and claims JSON, signed by key: only what the test changes in
// the JSON can make it fail.
std::string signed_token(std::string_view header, std::string_view claims,
                         const RsaPrivateKey& key = signing_key()) {
  std::string token = base64url_encode(header) + "." + base64url_encode(claims);
  return token + "." + base64url_encode(key.sign_rs256(token).value());
}

void expect_rejected(std::string_view token, std::string_view message) {
  const Result<DecodedJwt> verified = verify_jwt(token, known_keys());
  BOOST_TEST_REQUIRE(!verified.is_ok(), "accepted " << token);
  BOOST_TEST(verified.status().code() == Code::kUnauthenticated);
  BOOST_TEST(verified.status().message() == message);
}

constexpr std::string_view kClaims = R"({"iss":"https://as.example","sub":"u1","exp":2000000000})";

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "portcullis-jose-XXXXXX");
    BOOST_REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, std::string_view contents) const {
    const std::string file = path / name;
    std::ofstream(file, std::ios::binary) << contents;
    return file;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------- jwk

BOOST_AUTO_TEST_CASE(rfc7515_a2_example_verifies) {
  Json::Value jwk(Json::objectValue);
  jwk["kty"] = "RSA";
  jwk["n"] = std::string(kRfc7515Modulus);
  jwk["e"] = "AQAB";
  const Result<RsaPublicKey> key = parse_rsa_jwk(jwk);
  BOOST_TEST_REQUIRE(key.is_ok(), key.status().to_string());
  BOOST_TEST(key->bits() == 2048);
  BOOST_TEST(public_jwk(*key, "x")["n"].asString() == kRfc7515Modulus);

  const DecodedJwt decoded = decode_jwt(kRfc7515Token).value();
  BOOST_TEST(decoded.claims["iss"].asString() == "joe");
  BOOST_TEST(decoded.claims["exp"].asInt64() == 1300819380);
  BOOST_TEST(decoded.claims["http://example.com/is_root"].asBool());
  BOOST_TEST(key->verify_rs256(decoded.signing_input, decoded.signature));

  // One byte changed in the signed input, or in the signature, and it no longer verifies.
  std::string input = decoded.signing_input;
  input[30] = static_cast<char>(input[30] ^ 0x01);
  BOOST_TEST(!key->verify_rs256(input, decoded.signature));
  std::string signature = decoded.signature;
  signature[0] = static_cast<char>(signature[0] ^ 0x80);
  BOOST_TEST(!key->verify_rs256(decoded.signing_input, signature));

  // The example has no kid, which verify_jwt insists on.
  const RsaPublicKey& rfc_key = *key;
  const Result<DecodedJwt> verified =
      verify_jwt(kRfc7515Token, [&](std::string_view) { return &rfc_key; });
  BOOST_TEST(verified.status().message() == "token has no kid header");
}

BOOST_AUTO_TEST_CASE(public_jwk_round_trips) {
  const RsaPublicKey key = signing_key().public_key();
  const Json::Value jwk = public_jwk(key, "k1");
  BOOST_TEST(
      jwk.getMemberNames() == (std::vector<std::string>{"alg", "e", "kid", "kty", "n", "use"}),
      boost::test_tools::per_element());
  BOOST_TEST(jwk["kty"].asString() == "RSA");
  BOOST_TEST(jwk["use"].asString() == "sig");
  BOOST_TEST(jwk["alg"].asString() == "RS256");
  BOOST_TEST(jwk["kid"].asString() == "k1");
  BOOST_TEST(jwk["e"].asString() == "AQAB");
  BOOST_TEST(jwk["n"].asString().size() == 342u);  // 256 bytes, no leading zero byte
  const RsaPublicKey parsed = parse_rsa_jwk(jwk).value();
  BOOST_TEST(parsed.n() == key.n());
  BOOST_TEST(parsed.verify_rs256("x", signing_key().sign_rs256("x").value()));
}

BOOST_AUTO_TEST_CASE(parse_rsa_jwk_is_strict) {
  const Json::Value good = public_jwk(signing_key().public_key(), "k1");
  BOOST_TEST(parse_rsa_jwk(good).is_ok());
  Json::Value minimal(Json::objectValue);
  minimal["kty"] = "RSA";
  minimal["n"] = good["n"];
  minimal["e"] = good["e"];
  BOOST_TEST(parse_rsa_jwk(minimal).is_ok());

  auto with = [&](const char* name, const Json::Value& value) {
    Json::Value jwk = good;
    jwk[name] = value;
    return jwk;
  };
  auto without = [&](const char* name) {
    Json::Value jwk = good;
    jwk.removeMember(name);
    return jwk;
  };
  const std::string n = good["n"].asString();
  const std::string small_n = base64url_encode(signing_key().public_key().n().substr(0, 128));
  const std::pair<Json::Value, std::string> cases[] = {
      {Json::Value(Json::arrayValue), "JWK must be a JSON object"},
      {with("kty", "EC"), "JWK kty must be \"RSA\""},
      {without("kty"), "JWK kty must be \"RSA\""},
      {with("alg", "HS256"), "JWK alg must be \"RS256\" when present"},
      {with("alg", "RS512"), "JWK alg must be \"RS256\" when present"},
      {with("use", "enc"), "JWK use must be \"sig\" when present"},
      {with("use", 1), "JWK use must be \"sig\" when present"},
      {with("d", "AQAB"), "JWK contains private key material"},
      {with("p", "AQAB"), "JWK contains private key material"},
      {without("n"), "JWK member n must be a string"},
      {with("n", 5), "JWK member n must be a string"},
      {with("n", n + "=="), "JWK member n must be non-empty base64url without padding"},
      {with("n", n.substr(0, 100) + " " + n.substr(100)),
       "JWK member n must be non-empty base64url without padding"},
      {with("e", ""), "JWK member e must be non-empty base64url without padding"},
      {with("e", "AQAB+"), "JWK member e must be non-empty base64url without padding"},
      {with("n", small_n), "RSA key has 1024 bits; at least 2048 are required"},
      {with("e", "AQ"), "RSA public exponent must be odd, at least 3 and at most 64 bits"},
  };
  for (const auto& [jwk, message] : cases) {
    const Result<RsaPublicKey> parsed = parse_rsa_jwk(jwk);
    BOOST_TEST(parsed.status().code() == Code::kInvalidArgument);
    BOOST_TEST(parsed.status().message() == message);
  }
}

BOOST_AUTO_TEST_CASE(parse_jwks_keeps_rs256_keys_and_skips_others) {
  const Json::Value k1 = public_jwk(signing_key().public_key(), "k1");
  const Json::Value k2 = public_jwk(other_key().public_key(), "k2");
  Json::Value no_kid = k2;
  no_kid.removeMember("kid");
  no_kid.removeMember("alg");
  no_kid.removeMember("use");
  Json::Value encryption_key = k2;
  encryption_key["use"] = "enc";
  encryption_key["kid"] = "enc";
  Json::Value oaep_key = k2;
  oaep_key["alg"] = "RSA-OAEP";
  oaep_key["kid"] = "oaep";
  const Json::Value ec_key = parse(R"({"kty":"EC","crv":"P-256","kid":"ec",
      "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
      "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"})");
  const Json::Value symmetric = parse(R"({"kty":"oct","k":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ"})");

  Json::Value document(Json::objectValue);
  for (const Json::Value& key : {ec_key, k1, encryption_key, symmetric, oaep_key, k2, no_kid}) {
    document["keys"].append(key);
  }
  const Result<RsaKeySet> keys = parse_jwks(json::write(document));
  BOOST_TEST_REQUIRE(keys.is_ok(), keys.status().to_string());
  BOOST_TEST_REQUIRE(keys->size() == 3u);
  BOOST_TEST((*keys)[0].first == "k1");
  BOOST_TEST((*keys)[0].second.n() == signing_key().public_key().n());
  BOOST_TEST((*keys)[1].first == "k2");
  BOOST_TEST((*keys)[1].second.n() == other_key().public_key().n());
  BOOST_TEST((*keys)[2].first == "");

  BOOST_TEST(parse_jwks(R"({"keys":[]})").value().empty());
}

BOOST_AUTO_TEST_CASE(parse_jwks_refuses_malformed_sets) {
  const std::string k1 = json::write(public_jwk(signing_key().public_key(), "k1"));
  Json::Value weak = public_jwk(signing_key().public_key(), "weak");
  weak["n"] = base64url_encode(signing_key().public_key().n().substr(0, 128));
  const std::pair<std::string, std::string> cases[] = {
      {"", "JWKS is not a JSON object"},
      {"[]", "JWKS is not a JSON object"},
      {"{\"keys\":[]} trailing", "JWKS is not a JSON object"},
      {R"({"keys":[],"keys":[]})", "JWKS is not a JSON object"},
      {"{}", "JWKS keys must be an array"},
      {R"({"keys":{}})", "JWKS keys must be an array"},
      {R"({"keys":[1]})", "JWKS key 0: not a JSON object"},
      {R"({"keys":[{"n":"AQAB"}]})", "JWKS key 0: JWK kty must be a string"},
      {R"({"keys":[{"kty":"RSA","use":7}]})", "JWKS key 0: JWK use must be a string"},
      {R"({"keys":[)" + k1 + "," + k1 + "]}", "JWKS key 1: kid repeats an earlier key's kid"},
      {R"({"keys":[)" + json::write(weak) + "]}",
       "JWKS key 0: RSA key has 1024 bits; at least 2048 are required"},
      {R"({"keys":[{"kty":"RSA","kid":"x","n":"AQAB="}]})",
       "JWKS key 0: JWK member n must be non-empty base64url without padding"},
      {R"({"keys":[{"kty":"RSA","kid":3}]})", "JWKS key 0: kid must be a string"},
      {R"({"keys":)" + std::string(40, '[') + std::string(40, ']') + "}",
       "JWKS is not a JSON object"},
      {std::string(kMaxJwksBytes + 1, ' '), "JWKS exceeds 256 KiB"},
  };
  for (const auto& [json, message] : cases) {
    const Result<RsaKeySet> keys = parse_jwks(json);
    BOOST_TEST(keys.status().code() == Code::kInvalidArgument);
    BOOST_TEST(keys.status().message() == message);
  }
}

// ---------------------------------------------------------------------------------------- jwt

BOOST_AUTO_TEST_CASE(sign_jwt_writes_the_exact_header_and_verifies) {
  Json::Value claims = parse(kClaims);
  claims["scope"] = "read write";
  const std::string token = sign_jwt(claims, "at+jwt", "k1", signing_key()).value();

  const std::string header_segment = token.substr(0, token.find('.'));
  BOOST_TEST(crypto::base64url_decode(header_segment).value() ==
             R"({"alg":"RS256","typ":"at+jwt","kid":"k1"})");
  const std::string payload_segment =
      token.substr(header_segment.size() + 1, token.rfind('.') - header_segment.size() - 1);
  BOOST_TEST(crypto::base64url_decode(payload_segment).value() ==
             R"({"exp":2000000000,"iss":"https://as.example","scope":"read write","sub":"u1"})");

  const Result<DecodedJwt> verified = verify_jwt(token, known_keys());
  BOOST_TEST_REQUIRE(verified.is_ok(), verified.status().to_string());
  BOOST_TEST(verified->claims == claims);
  BOOST_TEST(verified->header["typ"].asString() == "at+jwt");
  BOOST_TEST(verified->signature.size() == 256u);
  BOOST_TEST(verified->signing_input == token.substr(0, token.rfind('.')));
}

BOOST_AUTO_TEST_CASE(sign_jwt_escapes_header_values_and_checks_inputs) {
  const std::string token = sign_jwt(parse(kClaims), "at+jwt", "k\"1\\", signing_key()).value();
  const DecodedJwt decoded = decode_jwt(token).value();
  BOOST_TEST(decoded.header["kid"].asString() == "k\"1\\");

  BOOST_TEST(
      sign_jwt(Json::Value(Json::arrayValue), "at+jwt", "k1", signing_key()).status().code() ==
      Code::kInvalidArgument);
  BOOST_TEST(sign_jwt(parse(kClaims), "", "k1", signing_key()).status().code() ==
             Code::kInvalidArgument);
  BOOST_TEST(sign_jwt(parse(kClaims), "at+jwt", "", signing_key()).status().code() ==
             Code::kInvalidArgument);
  Json::Value huge = parse(kClaims);
  huge["pad"] = std::string(12000, 'x');
  BOOST_TEST(sign_jwt(huge, "at+jwt", "k1", signing_key()).status().message() ==
             "JWT would exceed 16 KiB");
  huge["pad"] = std::string(11000, 'x');
  BOOST_TEST(
      verify_jwt(sign_jwt(huge, "at+jwt", "k1", signing_key()).value(), known_keys()).is_ok());
}

BOOST_AUTO_TEST_CASE(verify_jwt_rejects_other_algorithms) {
  // alg "none": unsigned, and also with a signature attached.
  const std::string none_input =
      base64url_encode(R"({"alg":"none","kid":"k1"})") + "." + base64url_encode(kClaims);
  expect_rejected(none_input + ".", "token has an empty segment");
  expect_rejected(none_input + "." + base64url_encode("sig"), "token alg must be RS256");

  // HS256 keyed with the public key's bytes: the classic algorithm-confusion forgery.
  const std::string hs_input = base64url_encode(R"({"alg":"HS256","typ":"at+jwt","kid":"k1"})") +
                               "." + base64url_encode(kClaims);
  const std::string forged =
      hs_input + "." +
      base64url_encode(crypto::hmac_sha256(signing_key().public_key().to_pem().value(), hs_input));
  expect_rejected(forged, "token alg must be RS256");

  for (std::string_view header :
       {R"({"alg":"rs256","kid":"k1"})", R"({"alg":"RS384","kid":"k1"})",
        R"({"alg":"PS256","kid":"k1"})", R"({"alg":["RS256"],"kid":"k1"})", R"({"kid":"k1"})",
        R"({"alg":"RS256 ","kid":"k1"})"}) {
    expect_rejected(signed_token(header, kClaims), "token alg must be RS256");
  }
}

BOOST_AUTO_TEST_CASE(verify_jwt_requires_a_known_kid_and_its_key) {
  BOOST_TEST(
      verify_jwt(signed_token(R"({"alg":"RS256","kid":"k1"})", kClaims), known_keys()).is_ok());
  expect_rejected(signed_token(R"({"alg":"RS256","typ":"at+jwt"})", kClaims),
                  "token has no kid header");
  expect_rejected(signed_token(R"({"alg":"RS256","kid":""})", kClaims), "token has no kid header");
  expect_rejected(signed_token(R"({"alg":"RS256","kid":"k2"})", kClaims),
                  "token kid names no known key");
  expect_rejected(signed_token(R"({"alg":"RS256","kid":7})", kClaims),
                  "token kid header must be a string");
  expect_rejected(signed_token(R"({"alg":"RS256","kid":"k1"})", kClaims, other_key()),
                  "token signature is invalid");
  BOOST_TEST(verify_jwt(signed_token(R"({"alg":"RS256","kid":"k1"})", kClaims), KeyForKid())
                 .status()
                 .code() == Code::kInvalidArgument);
}

BOOST_AUTO_TEST_CASE(verify_jwt_rejects_malformed_tokens) {
  const std::string good = sign_jwt(parse(kClaims), "at+jwt", "k1", signing_key()).value();
  BOOST_TEST_REQUIRE(verify_jwt(good, known_keys()).is_ok());
  const std::string three_segments = "token is not a compact JWS of three dot-separated segments";
  expect_rejected(good + ".", three_segments);
  expect_rejected(good + "." + good.substr(good.rfind('.') + 1), three_segments);
  expect_rejected(good.substr(0, good.rfind('.')), three_segments);
  expect_rejected("", three_segments);
  expect_rejected("abc", three_segments);
  expect_rejected("..", "token has an empty segment");
  expect_rejected(good.substr(good.find('.')), "token has an empty segment");

  const size_t first_dot = good.find('.');
  expect_rejected(good + "=", "token signature is not valid base64url");
  expect_rejected(good + "AAA", "token signature is not valid base64url");  // impossible length
  expect_rejected(good + "AA", "token signature is invalid");  // 257 bytes for a 256-byte key
  expect_rejected(good.substr(0, first_dot) + "=" + good.substr(first_dot),
                  "token header is not valid base64url");
  expect_rejected(" " + good, "token header is not valid base64url");
  std::string plus = good;
  plus[first_dot + 3] = '+';
  expect_rejected(plus, "token claims is not valid base64url");
  std::string changed_signature = good;
  changed_signature[good.size() - 10] = changed_signature[good.size() - 10] == 'A' ? 'B' : 'A';
  expect_rejected(changed_signature, "token signature is invalid");
  std::string changed_claims = good;
  changed_claims[first_dot + 8] = changed_claims[first_dot + 8] == 'A' ? 'B' : 'A';
  BOOST_TEST(!verify_jwt(changed_claims, known_keys()).is_ok());

  expect_rejected(signed_token("[1]", kClaims), "token header is not a JSON object");
  expect_rejected(signed_token(R"({"alg":"RS256","kid":"k1"})", R"("claims")"),
                  "token claims is not a JSON object");
  expect_rejected(signed_token(R"({"alg":"RS256","kid":"k1","alg":"none"})", kClaims),
                  "token header is not a JSON object");
  expect_rejected(signed_token(R"({"alg":"RS256","kid":"k1"})", R"({"sub":"a","sub":"b"})"),
                  "token claims is not a JSON object");
  expect_rejected(signed_token(R"({"alg":"RS256","kid":"k1","crit":["exp"],"exp":1})", kClaims),
                  "token header has crit, which is not supported");
  expect_rejected(signed_token(R"({"alg":"RS256","kid":"k1","typ":1})", kClaims),
                  "token typ header must be a string");
  expect_rejected(signed_token(R"({"alg":"RS256","kid":"k1"})",
                               R"({"deep":)" + std::string(50, '[') + std::string(50, ']') + "}"),
                  "token claims is not a JSON object");
  expect_rejected(std::string(kMaxJwtBytes + 1, 'A'), "token exceeds 16 KiB");
}

BOOST_AUTO_TEST_CASE(rs256_interoperates_with_the_openssl_cli) {
  TempDir dir;
  const std::string token = sign_jwt(parse(kClaims), "at+jwt", "k1", signing_key()).value();
  const DecodedJwt decoded = decode_jwt(token).value();
  const std::string pub = dir.write("pub.pem", signing_key().public_key().to_pem().value());
  const std::string input = dir.write("input", decoded.signing_input);
  const std::string sig = dir.write("sig", decoded.signature);
  const std::string tampered = dir.write("tampered", decoded.signing_input + " ");
  auto run = [](const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str());
  };

  // Our signature, checked by OpenSSL's command-line tool.
  BOOST_TEST(run("openssl dgst -sha256 -verify " + pub + " -signature " + sig + " " + input) == 0);
  BOOST_TEST(run("openssl dgst -sha256 -verify " + pub + " -signature " + sig + " " + tampered) !=
             0);

  // OpenSSL's signature, checked by us.
  const std::string key = dir.write("key.pem", signing_key().to_pem().value());
  BOOST_TEST_REQUIRE(run("openssl dgst -sha256 -sign " + key + " -out " +
                         (dir.path / "cli.sig").string() + " " + input) == 0);
  BOOST_TEST(signing_key().public_key().verify_rs256(decoded.signing_input, dir.read("cli.sig")));
  BOOST_TEST(dir.read("cli.sig") == decoded.signature);
}

// ------------------------------------------------------------------------------------- claims

namespace {

constexpr int64_t kNow = 1700000000;
constexpr int64_t kLeeway = 60;

ClaimChecks checks() {
  return ClaimChecks{"https://as.example", "https://mcp.example/", "at+jwt", kNow, kLeeway};
}

DecodedJwt jwt_with(const Json::Value& claims, const Json::Value& typ = "at+jwt") {
  DecodedJwt jwt;
  jwt.header = parse(R"({"alg":"RS256","kid":"k1"})");
  if (!typ.isNull()) jwt.header["typ"] = typ;
  jwt.claims = claims;
  return jwt;
}

Json::Value valid_claims() {
  Json::Value claims(Json::objectValue);
  claims["iss"] = "https://as.example";
  claims["aud"] = "https://mcp.example/";
  claims["exp"] = Json::Int64{kNow + 300};
  claims["nbf"] = Json::Int64{kNow};
  claims["iat"] = Json::Int64{kNow};
  return claims;
}

Json::Value valid_claims_with(const char* name, const Json::Value& value) {
  Json::Value claims = valid_claims();
  claims[name] = value;
  return claims;
}

Json::Value valid_claims_without(const char* name) {
  Json::Value claims = valid_claims();
  claims.removeMember(name);
  return claims;
}

std::string failure(const DecodedJwt& jwt, const ClaimChecks& with = checks()) {
  const Status status = check_claims(jwt, with);
  if (status.is_ok()) return "ok";
  BOOST_TEST(status.code() == Code::kUnauthenticated);
  return status.message();
}

}  // namespace

BOOST_AUTO_TEST_CASE(claims_valid_token_passes) {
  BOOST_TEST(failure(jwt_with(valid_claims())) == "ok");
  BOOST_TEST(failure(jwt_with(valid_claims_without("nbf"))) == "ok");
  BOOST_TEST(failure(jwt_with(valid_claims_without("iat"))) == "ok");
}

BOOST_AUTO_TEST_CASE(claims_typ_compares_media_types) {
  for (const char* typ : {"at+jwt", "AT+JWT", "application/at+jwt", "Application/At+JWT"}) {
    BOOST_TEST(failure(jwt_with(valid_claims(), typ)) == "ok", typ);
  }
  ClaimChecks prefixed = checks();
  prefixed.typ = "application/at+jwt";
  BOOST_TEST(failure(jwt_with(valid_claims(), "at+jwt"), prefixed) == "ok");

  for (const char* typ : {"JWT", "at+jwt ", "text/at+jwt", "application/jwt", "at+jwt/", ""}) {
    BOOST_TEST(failure(jwt_with(valid_claims(), typ)) == "token typ is not the expected type", typ);
  }
  BOOST_TEST(failure(jwt_with(valid_claims(), Json::Value())) == "token has no typ header");
  BOOST_TEST(failure(jwt_with(valid_claims(), 5)) == "token has no typ header");
}

BOOST_AUTO_TEST_CASE(claims_iss_is_byte_exact) {
  BOOST_TEST(failure(jwt_with(valid_claims_with("iss", "https://AS.example"))) ==
             "token iss is not the expected issuer");
  BOOST_TEST(failure(jwt_with(valid_claims_with("iss", "https://as.example/"))) ==
             "token iss is not the expected issuer");
  BOOST_TEST(failure(jwt_with(valid_claims_with("iss", Json::Value(Json::arrayValue)))) ==
             "token has no iss claim");
  BOOST_TEST(failure(jwt_with(valid_claims_without("iss"))) == "token has no iss claim");
}

BOOST_AUTO_TEST_CASE(claims_aud_string_or_array) {
  Json::Value list(Json::arrayValue);
  list.append("https://other.example/");
  list.append("https://mcp.example/");
  BOOST_TEST(failure(jwt_with(valid_claims_with("aud", list))) == "ok");

  const std::string mismatch = "token aud does not name this audience";
  BOOST_TEST(failure(jwt_with(valid_claims_with("aud", "https://mcp.example"))) == mismatch);
  BOOST_TEST(failure(jwt_with(valid_claims_with("aud", Json::Value(Json::arrayValue)))) ==
             mismatch);
  Json::Value others(Json::arrayValue);
  others.append("https://other.example/");
  BOOST_TEST(failure(jwt_with(valid_claims_with("aud", others))) == mismatch);
  Json::Value mixed = list;
  mixed.append(1);
  BOOST_TEST(failure(jwt_with(valid_claims_with("aud", mixed))) ==
             "token aud array holds a non-string");
  BOOST_TEST(failure(jwt_with(valid_claims_with("aud", 1))) ==
             "token aud must be a string or an array");
  BOOST_TEST(failure(jwt_with(valid_claims_without("aud"))) == "token has no aud claim");
}

BOOST_AUTO_TEST_CASE(claims_exp_at_the_leeway_boundary) {
  const std::string expired = "token has expired";
  auto with_exp = [](const Json::Value& exp) { return jwt_with(valid_claims_with("exp", exp)); };
  BOOST_TEST(failure(with_exp(Json::Int64{kNow - kLeeway + 1})) == "ok");
  BOOST_TEST(failure(with_exp(Json::Int64{kNow - kLeeway})) == expired);
  BOOST_TEST(failure(with_exp(Json::Int64{kNow - kLeeway - 1})) == expired);
  BOOST_TEST(failure(with_exp(Json::Int64{kNow})) == "ok");
  // Fractions round towards rejection.
  BOOST_TEST(failure(with_exp(kNow - kLeeway + 0.5)) == expired);
  BOOST_TEST(failure(with_exp(kNow - kLeeway + 1.0)) == "ok");
  // Extremes neither overflow nor wrap.
  BOOST_TEST(failure(with_exp(std::numeric_limits<Json::Int64>::max())) == "ok");
  BOOST_TEST(failure(with_exp(std::numeric_limits<Json::UInt64>::max())) == "ok");
  BOOST_TEST(failure(with_exp(1e300)) == "ok");
  BOOST_TEST(failure(with_exp(std::numeric_limits<Json::Int64>::min())) == expired);
  BOOST_TEST(failure(with_exp(-1e300)) == expired);

  BOOST_TEST(failure(jwt_with(valid_claims_without("exp"))) == "token has no exp claim");
  BOOST_TEST(failure(with_exp(std::to_string(kNow + 300))) == "token exp must be a number");
  BOOST_TEST(failure(with_exp(true)) == "token exp must be a number");
  BOOST_TEST(failure(with_exp(Json::Value())) == "token exp must be a number");

  ClaimChecks strict = checks();
  strict.leeway_seconds = 0;
  BOOST_TEST(failure(with_exp(Json::Int64{kNow}), strict) == expired);
  BOOST_TEST(failure(with_exp(Json::Int64{kNow + 1}), strict) == "ok");
}

BOOST_AUTO_TEST_CASE(claims_nbf_and_iat_at_the_leeway_boundary) {
  const std::pair<const char*, std::string> rules[] = {
      {"nbf", "token is not valid yet (nbf)"},
      {"iat", "token was issued in the future (iat)"},
  };
  for (const auto& [name, message] : rules) {
    auto with = [&](const Json::Value& when) { return jwt_with(valid_claims_with(name, when)); };
    BOOST_TEST(failure(with(Json::Int64{kNow + kLeeway})) == "ok");
    BOOST_TEST(failure(with(Json::Int64{kNow + kLeeway + 1})) == message);
    BOOST_TEST(failure(with(kNow + kLeeway + 0.5)) == message);
    BOOST_TEST(failure(with(Json::Int64{kNow - 100000})) == "ok");
    BOOST_TEST(failure(with(std::numeric_limits<Json::Int64>::max())) == message);
    BOOST_TEST(failure(with("soon")) == "token " + std::string(name) + " must be a number");
  }
}

BOOST_AUTO_TEST_CASE(claims_failures_are_distinct_and_never_quote_the_token) {
  const DecodedJwt cases[] = {
      jwt_with(valid_claims(), "secret-typ"),
      jwt_with(valid_claims_with("iss", "secret-issuer")),
      jwt_with(valid_claims_with("aud", "secret-audience")),
      jwt_with(valid_claims_with("exp", Json::Int64{1})),
      jwt_with(valid_claims_with("nbf", Json::Int64{kNow + 3600})),
      jwt_with(valid_claims_with("iat", Json::Int64{kNow + 3600})),
      jwt_with(valid_claims_without("exp")),
  };
  std::set<std::string> messages;
  for (const DecodedJwt& jwt : cases) {
    const std::string message = failure(jwt);
    BOOST_TEST(message != "ok");
    BOOST_TEST(message.find("secret") == std::string::npos, message);
    messages.insert(message);
  }
  BOOST_TEST(messages.size() == std::size(cases));
}

BOOST_AUTO_TEST_CASE(claims_refuse_incomplete_checks) {
  const std::function<void(ClaimChecks&)> breakages[] = {
      [](ClaimChecks& c) { c.issuer.clear(); },
      [](ClaimChecks& c) { c.audience.clear(); },
      [](ClaimChecks& c) { c.typ.clear(); },
      [](ClaimChecks& c) { c.leeway_seconds = -1; },
  };
  for (const auto& breakage : breakages) {
    ClaimChecks bad = checks();
    breakage(bad);
    BOOST_TEST(check_claims(jwt_with(valid_claims()), bad).code() == Code::kInvalidArgument);
  }
}

BOOST_AUTO_TEST_CASE(claims_after_a_real_round_trip) {
  Json::Value claims = valid_claims();
  const std::string token = sign_jwt(claims, "at+jwt", "k1", signing_key()).value();
  const DecodedJwt verified = verify_jwt(token, known_keys()).value();
  BOOST_TEST(check_claims(verified, checks()).is_ok());
  BOOST_TEST(!check_claims(verified, ClaimChecks{"https://as.example", "https://mcp.example/",
                                                 "at+jwt", kNow + 400, kLeeway})
                  .is_ok());
}

// ---------------------------------------------------------------------------------------------
// ES256 and EdDSA access tokens (jose/jws_key.h), and what keeps one algorithm from passing as
// another.

namespace {

const JwsPrivateKey& jws_key(JwsAlg alg) {
  static const JwsPrivateKey rs = JwsPrivateKey::generate(JwsAlg::kRS256).value();
  static const JwsPrivateKey es = JwsPrivateKey::generate(JwsAlg::kES256).value();
  static const JwsPrivateKey ed = JwsPrivateKey::generate(JwsAlg::kEdDSA).value();
  return alg == JwsAlg::kRS256 ? rs : alg == JwsAlg::kES256 ? es : ed;
}

// kid "RS256", "ES256", "EdDSA": the public half of jws_key of that algorithm.
JwsKeyForKid jws_keys() {
  static const JwsPublicKey rs = jws_key(JwsAlg::kRS256).public_key().value();
  static const JwsPublicKey es = jws_key(JwsAlg::kES256).public_key().value();
  static const JwsPublicKey ed = jws_key(JwsAlg::kEdDSA).public_key().value();
  return [](std::string_view kid) -> const JwsPublicKey* {
    if (kid == "RS256") return &rs;
    if (kid == "ES256") return &es;
    if (kid == "EdDSA") return &ed;
    return nullptr;
  };
}

// header.claims signed by `key` whatever the header says.
std::string jws_token(std::string_view header, const JwsPrivateKey& key) {
  std::string token = base64url_encode(header) + "." + base64url_encode(kClaims);
  return token + "." + base64url_encode(key.sign(token).value());
}

void expect_jws_rejected(std::string_view token, std::string_view message) {
  const Result<DecodedJwt> verified = verify_jws(token, jws_keys());
  BOOST_TEST_REQUIRE(!verified.is_ok(), "accepted " << token);
  BOOST_TEST(verified.status().code() == Code::kUnauthenticated);
  BOOST_TEST(verified.status().message() == message);
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_algorithm_signs_tokens_its_public_key_verifies) {
  for (JwsAlg alg : kAccessTokenAlgs) {
    const std::string name(alg_name(alg));
    BOOST_TEST_CONTEXT(name) {
      const JwsPrivateKey& key = jws_key(alg);
      BOOST_TEST((key.alg() == alg));
      const std::string token = sign_jwt(parse(kClaims), "at+jwt", name, key).value();
      const Result<DecodedJwt> verified = verify_jws(token, jws_keys());
      BOOST_TEST_REQUIRE(verified.is_ok(), verified.status().to_string());
      BOOST_TEST(verified->header["alg"].asString() == name);
      BOOST_TEST((verified->alg == alg));
      BOOST_TEST(verified->signature.size() == key.signature_bytes());
      BOOST_TEST(verified->claims["sub"].asString() == "u1");
      // ES256 and EdDSA signatures are fixed-size JWS forms: r || s and the RFC 8032 bytes.
      if (alg != JwsAlg::kRS256) BOOST_TEST(verified->signature.size() == 64u);

      // One changed claim byte breaks the signature.
      std::string tampered = token;
      const size_t dot = tampered.find('.');
      tampered[dot + 3] = tampered[dot + 3] == 'A' ? 'B' : 'A';
      BOOST_TEST(!verify_jws(tampered, jws_keys()).is_ok());

      // The storage form round-trips, and is refused as another algorithm's key.
      const std::string der = key.to_pkcs8_der().value();
      const JwsPrivateKey reloaded = JwsPrivateKey::from_pkcs8_der(alg, der).value();
      BOOST_TEST(verify_jws(sign_jwt(parse(kClaims), "at+jwt", name, reloaded).value(), jws_keys())
                     .is_ok());
      for (JwsAlg other : kAccessTokenAlgs) {
        if (other != alg) BOOST_TEST(!JwsPrivateKey::from_pkcs8_der(other, der).is_ok());
      }
      BOOST_TEST(!JwsPrivateKey::from_pkcs8_der(alg, der + "x").is_ok());
    }
  }
}

BOOST_AUTO_TEST_CASE(ecdsa_signatures_differ_each_time_and_eddsa_ones_do_not) {
  const JwsPrivateKey& es = jws_key(JwsAlg::kES256);
  const JwsPrivateKey& ed = jws_key(JwsAlg::kEdDSA);
  BOOST_TEST(es.sign("x").value() != es.sign("x").value());  // a fresh nonce per signature
  BOOST_TEST(ed.sign("x").value() == ed.sign("x").value());  // RFC 8032: deterministic
}

BOOST_AUTO_TEST_CASE(verify_jws_refuses_algorithm_confusion) {
  const JwsPrivateKey& rs = jws_key(JwsAlg::kRS256);
  const JwsPrivateKey& es = jws_key(JwsAlg::kES256);
  const JwsPrivateKey& ed = jws_key(JwsAlg::kEdDSA);
  constexpr std::string_view kMismatch = "token alg is not the algorithm of the key its kid names";
  // A header naming another algorithm than the key of its kid, whoever signed it.
  expect_jws_rejected(jws_token(R"({"alg":"ES256","kid":"RS256"})", es), kMismatch);
  expect_jws_rejected(jws_token(R"({"alg":"RS256","kid":"ES256"})", rs), kMismatch);
  expect_jws_rejected(jws_token(R"({"alg":"EdDSA","kid":"ES256"})", ed), kMismatch);
  expect_jws_rejected(jws_token(R"({"alg":"ES256","kid":"EdDSA"})", es), kMismatch);
  // The right header and kid, another key's signature.
  expect_jws_rejected(jws_token(R"({"alg":"ES256","kid":"ES256"})",
                                JwsPrivateKey::generate(JwsAlg::kES256).value()),
                      "token signature is invalid");
  expect_jws_rejected(jws_token(R"({"alg":"EdDSA","kid":"EdDSA"})",
                                JwsPrivateKey::generate(JwsAlg::kEdDSA).value()),
                      "token signature is invalid");

  // "none" and HMAC keyed with a public key's bytes (the classic forgery), for every kid.
  const std::string accepted = "token alg must be RS256, ES256, EdDSA";
  for (std::string_view kid : {"RS256", "ES256", "EdDSA"}) {
    const std::string kid_json = "\"" + std::string(kid) + "\"";
    const std::string none_input = base64url_encode(R"({"alg":"none","kid":)" + kid_json + "}") +
                                   "." + base64url_encode(kClaims);
    expect_jws_rejected(none_input + "." + base64url_encode("sig"), accepted);
    const std::string hs_input =
        base64url_encode(R"({"alg":"HS256","typ":"at+jwt","kid":)" + kid_json + "}") + "." +
        base64url_encode(kClaims);
    const std::string jwk = json::write(jws_keys()(kid)->jwk(kid));
    expect_jws_rejected(hs_input + "." + base64url_encode(crypto::hmac_sha256(jwk, hs_input)),
                        accepted);
  }
  for (std::string_view header :
       {R"({"alg":"es256","kid":"ES256"})", R"({"alg":"ES384","kid":"ES256"})",
        R"({"alg":"Ed25519","kid":"EdDSA"})", R"({"alg":"EDDSA","kid":"EdDSA"})",
        R"({"alg":["ES256"],"kid":"ES256"})"}) {
    expect_jws_rejected(jws_token(header, es), accepted);
  }

  // An ES256 signature in OpenSSL's DER form instead of JWS r || s is refused by its length.
  const std::string input =
      base64url_encode(R"({"alg":"ES256","kid":"ES256"})") + "." + base64url_encode(kClaims);
  std::string der(72, '\x30');
  expect_jws_rejected(input + "." + base64url_encode(der), "token signature is invalid");

  // The RS256-only verifier (ID tokens of identity providers) refuses ES256 and EdDSA outright.
  BOOST_TEST(
      verify_jwt(jws_token(R"({"alg":"ES256","kid":"k1"})", es), known_keys()).status().message() ==
      "token alg must be RS256");
}

BOOST_AUTO_TEST_CASE(jwks_publishes_and_reads_keys_of_every_algorithm) {
  Json::Value doc(Json::objectValue);
  doc["keys"] = Json::Value(Json::arrayValue);
  for (JwsAlg alg : kAccessTokenAlgs) {
    doc["keys"].append(jws_keys()(alg_name(alg))->jwk(alg_name(alg)));
  }
  const Json::Value& es = doc["keys"][1];
  BOOST_TEST(es["kty"].asString() == "EC");
  BOOST_TEST(es["crv"].asString() == "P-256");
  BOOST_TEST(es["alg"].asString() == "ES256");
  BOOST_TEST(es["use"].asString() == "sig");
  BOOST_TEST(crypto::base64url_decode(es["x"].asString())->size() == 32u);
  BOOST_TEST(crypto::base64url_decode(es["y"].asString())->size() == 32u);
  const Json::Value& ed = doc["keys"][2];
  BOOST_TEST(ed["kty"].asString() == "OKP");
  BOOST_TEST(ed["crv"].asString() == "Ed25519");
  BOOST_TEST(ed["alg"].asString() == "EdDSA");
  BOOST_TEST(!ed.isMember("d"));

  // Another P-384 key, an ES256 key for encryption and a mislabelled one are skipped.
  Json::Value p384(Json::objectValue);
  p384["kty"] = "EC";
  p384["crv"] = "P-384";
  p384["kid"] = "p384";
  doc["keys"].append(p384);
  Json::Value enc = es;
  enc["kid"] = "enc";
  enc["use"] = "enc";
  doc["keys"].append(enc);
  Json::Value mislabelled = es;
  mislabelled["kid"] = "mislabelled";
  mislabelled["alg"] = "RS256";
  doc["keys"].append(mislabelled);

  const JwsKeySet keys = parse_jws_jwks(json::write(doc)).value();
  BOOST_TEST_REQUIRE(keys.size() == 3u);
  for (size_t i = 0; i < keys.size(); ++i) {
    BOOST_TEST(keys[i].first == std::string(alg_name(kAccessTokenAlgs[i])));
    BOOST_TEST((keys[i].second.alg() == kAccessTokenAlgs[i]));
    const std::string token =
        sign_jwt(parse(kClaims), "at+jwt", keys[i].first, jws_key(kAccessTokenAlgs[i])).value();
    BOOST_TEST(
        keys[i].second.verify(token.substr(0, token.rfind('.')),
                              *crypto::base64url_decode(token.substr(token.rfind('.') + 1))));
  }
  // The RS256-only reader keeps just the RSA key.
  BOOST_TEST(parse_jwks(json::write(doc))->size() == 1u);

  // A published private key, an off-curve point or a short Ed25519 key refuses the whole set.
  Json::Value with_d = doc;
  with_d["keys"][1]["d"] = base64url_encode(std::string(32, 'd'));
  BOOST_TEST(parse_jws_jwks(json::write(with_d)).status().message() ==
             "JWKS key 1: JWK contains private key material");
  Json::Value off_curve = doc;
  off_curve["keys"][1]["y"] = base64url_encode(std::string(32, '\x01'));
  BOOST_TEST(!parse_jws_jwks(json::write(off_curve)).is_ok());
  Json::Value short_ed = doc;
  short_ed["keys"][2]["x"] = base64url_encode(std::string(31, '\x01'));
  BOOST_TEST(!parse_jws_jwks(json::write(short_ed)).is_ok());
}
