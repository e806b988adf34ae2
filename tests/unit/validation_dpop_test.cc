// The verifier's DPoP seam filled with DpopProofChecker (RFC 9449 §7), and the DPoP
// challenges of lib/validation/challenge.h.
#define BOOST_TEST_MODULE validation_dpop
#include <boost/test/unit_test.hpp>
#include <set>

#include "access_tokens.h"
#include "crypto/base64.h"
#include "dpop/proof.h"
#include "dpop/proof_key.h"
#include "format/json.h"
#include "jose/jwk.h"
#include "jose/jwt.h"
#include "validation/challenge.h"
#include "validation/dpop_checker.h"
#include "validation/key_cache.h"
#include "validation/verifier.h"

namespace {

using namespace portcullis;
using namespace portcullis::validation;

using testing::kAudience;
using testing::kIssuer;
using testing::kNow;
const std::string kUrl = "https://mcp.example.com/mcp";
const std::string kPrm = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";

const crypto::RsaPrivateKey& issuer_key() {
  return testing::rsa_key(0);
}
const crypto::RsaPrivateKey& client_key() {
  return testing::rsa_key(1);
}
const crypto::RsaPrivateKey& other_client_key() {
  return testing::rsa_key(2);
}

std::string thumbprint(const crypto::RsaPrivateKey& key) {
  return dpop::jwk_thumbprint({{"e", crypto::base64url_encode(key.public_key().e())},
                               {"kty", "RSA"},
                               {"n", crypto::base64url_encode(key.public_key().n())}});
}

std::string access_token(const std::string& jkt) {
  Json::Value c = testing::access_claims();
  c["jti"] = "jti-" + jkt;
  if (!jkt.empty()) c["cnf"]["jkt"] = jkt;
  return jose::sign_jwt(c, "at+jwt", "k1", issuer_key()).value();
}

struct ProofSpec {
  std::string method = "POST";
  std::string url = kUrl;
  int64_t iat = kNow;
  std::string jti = "p-1";
  const crypto::RsaPrivateKey* key = &client_key();
};

std::string proof(const std::string& token, const ProofSpec& spec = {}) {
  Json::Value header(Json::objectValue);
  header["typ"] = "dpop+jwt";
  header["alg"] = "RS256";
  header["jwk"]["kty"] = "RSA";
  header["jwk"]["n"] = crypto::base64url_encode(spec.key->public_key().n());
  header["jwk"]["e"] = crypto::base64url_encode(spec.key->public_key().e());
  Json::Value claims(Json::objectValue);
  claims["jti"] = spec.jti;
  claims["htm"] = spec.method;
  claims["htu"] = spec.url;
  claims["iat"] = static_cast<Json::Int64>(spec.iat);
  claims["ath"] = dpop::access_token_hash(token);
  std::string input = crypto::base64url_encode(json::write(header)) + "." +
                      crypto::base64url_encode(json::write(claims));
  return input + "." + crypto::base64url_encode(spec.key->sign_rs256(input).value());
}

// A verifier whose replay store is an in-memory set.
struct Fixture {
  std::set<std::string> seen;
  std::shared_ptr<Verifier> verifier;
  Fixture() {
    Json::Value jwks(Json::objectValue);
    jwks["keys"].append(jose::public_jwk(issuer_key().public_key(), "k1"));
    auto keys = std::make_shared<JwksKeyCache>(
        "https://auth.example.com/keys",
        [doc = json::write(jwks)](const std::string&) -> Result<std::string> { return doc; });
    auto checker = std::make_shared<DpopProofChecker>(60, [this](const dpop::VerifiedProof& p) {
      if (!seen.insert(p.jkt + "/" + p.jti).second) return dpop::invalid_proof("replayed");
      return Status::ok();
    });
    verifier = Verifier::create({kIssuer, kAudience}, keys, checker).value();
  }
  Verdict verify(const std::string& authorization, std::optional<std::string> dpop,
                 std::string method = "POST", std::string url = kUrl) {
    RequestFacts facts;
    facts.authorization = authorization;
    if (dpop) facts.dpop_proof = *dpop;
    facts.method = method;
    facts.url = url;
    return verifier->verify(facts, {"demo:read"}, kNow);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(bound_token_needs_the_dpop_scheme_and_a_proof_by_its_key) {
  Fixture f;
  const std::string token = access_token(thumbprint(client_key()));
  const std::string good = proof(token);

  Verdict as_bearer = f.verify("Bearer " + token, good);
  BOOST_TEST((as_bearer.outcome == Outcome::kInvalidToken));
  BOOST_TEST(as_bearer.dpop_error == "invalid_token");
  Verdict no_proof = f.verify("DPoP " + token, std::nullopt);
  BOOST_TEST(no_proof.dpop_error == "invalid_dpop_proof");
  ProofSpec other;
  other.key = &other_client_key();
  BOOST_TEST(f.verify("DPoP " + token, proof(token, other)).dpop_error == "invalid_dpop_proof");
  ProofSpec wrong_url;
  wrong_url.url = "https://mcp.example.com/other";
  BOOST_TEST(f.verify("DPoP " + token, proof(token, wrong_url)).dpop_error == "invalid_dpop_proof");
  BOOST_TEST(f.verify("DPoP " + token, good, "GET").dpop_error == "invalid_dpop_proof");
  ProofSpec stale;
  stale.iat = kNow - 61;
  BOOST_TEST(f.verify("DPoP " + token, proof(token, stale)).dpop_error == "invalid_dpop_proof");
  // A proof made for another token (ath) is refused.
  BOOST_TEST(f.verify("DPoP " + token, proof(access_token("x"))).dpop_error ==
             "invalid_dpop_proof");

  Verdict ok = f.verify("DPoP " + token, good);
  BOOST_TEST(ok.valid(), ok.reason);
  BOOST_TEST(ok.claims->cnf_jkt == thumbprint(client_key()));
  // The same proof again is a replay.
  Verdict replay = f.verify("DPoP " + token, good);
  BOOST_TEST(replay.dpop_error == "invalid_dpop_proof");
  BOOST_TEST(replay.reason == "replayed");
}

BOOST_AUTO_TEST_CASE(unbound_tokens_stay_bearer_tokens) {
  Fixture f;
  const std::string token = access_token("");
  BOOST_TEST(f.verify("Bearer " + token, std::nullopt).valid());
  Verdict as_dpop = f.verify("DPoP " + token, proof(token));
  BOOST_TEST((as_dpop.outcome == Outcome::kInvalidToken));
  BOOST_TEST(as_dpop.dpop_error == "invalid_token");
  BOOST_TEST(f.seen.empty());  // nothing was remembered for refused or unbound presentations
}

BOOST_AUTO_TEST_CASE(dpop_refusals_get_a_dpop_challenge_with_resource_metadata) {
  Fixture f;
  const std::string token = access_token(thumbprint(client_key()));
  Verdict v = f.verify("DPoP " + token, std::nullopt);
  BOOST_TEST(www_authenticate(v, kPrm, "demo:read") ==
             "DPoP error=\"invalid_dpop_proof\", error_description=\"a DPoP-bound token needs a "
             "DPoP proof\", algs=\"ES256 RS256 EdDSA\", resource_metadata=\"" +
                 kPrm + "\"");
  http::Response r = challenge_response(v, kPrm, {"demo:read"});
  BOOST_TEST(r.status == 401);
  BOOST_TEST(r.body.find("invalid_dpop_proof") != std::string::npos);
  // Other refusals keep the Bearer challenge of contract §6.
  Verdict bad = f.verify("Bearer not.a.token", std::nullopt);
  BOOST_TEST(www_authenticate(bad, kPrm, "demo:read").rfind("Bearer error=\"invalid_token\"", 0) ==
             0);
}

BOOST_AUTO_TEST_CASE(a_replay_store_that_cannot_answer_refuses_with_unavailable) {
  Json::Value jwks(Json::objectValue);
  jwks["keys"].append(jose::public_jwk(issuer_key().public_key(), "k1"));
  auto keys = std::make_shared<JwksKeyCache>(
      "https://auth.example.com/keys",
      [doc = json::write(jwks)](const std::string&) -> Result<std::string> { return doc; });
  auto checker = std::make_shared<DpopProofChecker>(
      60, [](const dpop::VerifiedProof&) { return Status::unavailable("store down"); });
  auto verifier = Verifier::create({kIssuer, kAudience}, keys, checker).value();
  const std::string token = access_token(thumbprint(client_key()));
  RequestFacts facts;
  const std::string authorization = "DPoP " + token;
  const std::string dpop = proof(token);
  facts.authorization = authorization;
  facts.dpop_proof = dpop;
  facts.method = "POST";
  facts.url = kUrl;
  BOOST_TEST((verifier->verify(facts, {}, kNow).outcome == Outcome::kUnavailable));
}
