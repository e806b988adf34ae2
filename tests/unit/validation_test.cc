#define BOOST_TEST_MODULE validation
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <thread>

#include "access_tokens.h"
#include "crypto/base64.h"
#include "format/json.h"
#include "jose/jwk.h"
#include "jose/jwt.h"
#include "validation/challenge.h"
#include "validation/extractor.h"
#include "validation/key_cache.h"
#include "validation/token_cache.h"
#include "validation/validation_events.h"
#include "validation/verifier.h"

namespace {

using namespace portcullis;
using namespace portcullis::validation;

using testing::kAudience;
using testing::kIssuer;
using testing::kNow;

const crypto::RsaPrivateKey& key_a() {
  return testing::rsa_key(0);
}
const crypto::RsaPrivateKey& key_b() {
  return testing::rsa_key(1);
}

std::string jwks_with(
    std::initializer_list<std::pair<const crypto::RsaPrivateKey*, std::string>> keys) {
  Json::Value doc(Json::objectValue);
  doc["keys"] = Json::Value(Json::arrayValue);
  for (const auto& [key, kid] : keys) doc["keys"].append(jose::public_jwk(key->public_key(), kid));
  return json::write(doc);
}

Json::Value claims(const std::string& scope = "demo:read") {
  return testing::access_claims(scope);
}

std::string sign(const Json::Value& c, const crypto::RsaPrivateKey& key = key_a(),
                 std::string kid = "ka", std::string typ = "at+jwt") {
  return jose::sign_jwt(c, typ, kid, key).value();
}

// A fetcher that serves `body` and counts calls; `fail` makes it answer an error.
struct FakeJwks {
  std::string body = jwks_with({{&key_a(), "ka"}});
  bool fail = false;
  std::atomic<int> calls{0};
  JwksFetcher fetcher() {
    return [this](const std::string&) -> Result<std::string> {
      ++calls;
      if (fail) return Status::unavailable("down");
      return body;
    };
  }
};

std::shared_ptr<Verifier> make_verifier(FakeJwks& jwks,
                                        std::shared_ptr<const ProofChecker> proofs = {}) {
  auto cache = std::make_shared<JwksKeyCache>("https://auth.example.com/keys", jwks.fetcher());
  return Verifier::create({kIssuer, kAudience}, cache, std::move(proofs)).value();
}

std::string bearer(const std::string& token) {
  return "Bearer " + token;
}

BOOST_AUTO_TEST_CASE(extractor_reads_bearer_and_dpop_and_says_why_not) {
  BOOST_TEST((extract_token(std::nullopt).problem == ExtractProblem::kMissing));
  BOOST_TEST((extract_token("").problem == ExtractProblem::kMissing));
  BOOST_TEST((extract_token("Basic dXNlcjpwdw==").problem == ExtractProblem::kNotBearer));
  BOOST_TEST((extract_token("Bearer").problem == ExtractProblem::kMalformed));
  BOOST_TEST((extract_token("Bearer a b").problem == ExtractProblem::kMalformed));
  BOOST_TEST((extract_token("Bearer a\"b").problem == ExtractProblem::kMalformed));
  BOOST_TEST((extract_token("Bearer ==").problem == ExtractProblem::kMalformed));
  auto ok = extract_token("bEaReR   abc.def-_~+/=");
  BOOST_TEST(ok.ok());
  BOOST_TEST(ok.token == "abc.def-_~+/=");
  auto dpop = extract_token("DPoP x.y.z");
  BOOST_TEST(dpop.ok());
  BOOST_TEST((dpop.scheme == TokenScheme::kDPoP));
}

BOOST_AUTO_TEST_CASE(a_valid_token_yields_its_claims) {
  FakeJwks jwks;
  auto v = make_verifier(jwks);
  Verdict verdict = v->verify(bearer(sign(claims("demo:read demo:write"))), {"demo:read"}, kNow);
  BOOST_TEST(verdict.valid(), verdict.reason);
  BOOST_TEST(verdict.claims->sub == "usr_01");
  BOOST_TEST(verdict.claims->client_id == "dcr_01");
  BOOST_TEST(verdict.claims->org_id == "org_acme");
  BOOST_TEST(verdict.claims->jti == "jti-1");
  BOOST_TEST(verdict.claims->exp == kNow + 600);
  BOOST_TEST(verdict.claims->scopes.size() == 2u);
  BOOST_TEST(verdict.claims->cnf_jkt.empty());
  BOOST_TEST(verdict.http_status() == 200);
}

BOOST_AUTO_TEST_CASE(every_invalid_token_is_a_401_invalid_token) {
  FakeJwks jwks;
  auto v = make_verifier(jwks);
  auto expect_invalid = [&](const std::string& header, const char* what) {
    Verdict verdict = v->verify(header, {}, kNow);
    BOOST_TEST((verdict.outcome == Outcome::kInvalidToken), what << ": " << verdict.reason);
    BOOST_TEST(verdict.http_status() == 401);
  };
  expect_invalid(bearer(sign(claims(), key_b(), "ka")), "signature by another key");
  expect_invalid(bearer(sign(claims(), key_a(), "unknown")), "unknown kid");
  expect_invalid(bearer(sign(claims(), key_a(), "ka", "JWT")), "typ JWT");
  Json::Value c = claims();
  c["aud"] = "https://other.example.com/mcp";
  expect_invalid(bearer(sign(c)), "another resource's audience");
  c = claims();
  c["aud"] = Json::Value(Json::arrayValue);
  c["aud"].append(kAudience);
  c["aud"].append("https://other.example.com/mcp");
  expect_invalid(bearer(sign(c)), "audience array");
  c = claims();
  c["iss"] = "https://auth.example.com/resources/res_02";
  expect_invalid(bearer(sign(c)), "another issuer");
  c = claims();
  c["exp"] = static_cast<Json::Int64>(kNow - 61);
  expect_invalid(bearer(sign(c)), "expired beyond the skew");
  c = claims();
  c["nbf"] = static_cast<Json::Int64>(kNow + 61);
  expect_invalid(bearer(sign(c)), "not yet valid");
  c = claims();
  c.removeMember("jti");
  expect_invalid(bearer(sign(c)), "no jti");
  expect_invalid("Bearer not-a-jwt", "garbage");
  std::string token = sign(claims());
  token[token.size() - 5] = token[token.size() - 5] == 'A' ? 'B' : 'A';
  expect_invalid(bearer(token), "tampered signature");
}

BOOST_AUTO_TEST_CASE(es256_and_eddsa_tokens_verify_against_the_jwks_and_alg_confusion_fails) {
  const auto es = jose::JwsPrivateKey::generate(jose::JwsAlg::kES256).value();
  const auto ed = jose::JwsPrivateKey::generate(jose::JwsAlg::kEdDSA).value();
  Json::Value doc(Json::objectValue);
  doc["keys"] = Json::Value(Json::arrayValue);
  doc["keys"].append(jose::public_jwk(key_a().public_key(), "ka"));
  doc["keys"].append(es.public_key()->jwk("ke"));
  doc["keys"].append(ed.public_key()->jwk("kd"));
  FakeJwks jwks;
  jwks.body = json::write(doc);
  auto v = make_verifier(jwks);
  const std::string by_es = jose::sign_jwt(claims(), "at+jwt", "ke", es).value();
  const std::string by_ed = jose::sign_jwt(claims(), "at+jwt", "kd", ed).value();
  Verdict verdict = v->verify(bearer(by_es), {"demo:read"}, kNow);
  BOOST_TEST(verdict.valid(), verdict.reason);
  BOOST_TEST(verdict.claims->sub == "usr_01");
  verdict = v->verify(bearer(by_ed), {"demo:read"}, kNow);
  BOOST_TEST(verdict.valid(), verdict.reason);
  BOOST_TEST(v->verify(bearer(sign(claims())), {"demo:read"}, kNow).valid());  // RS256 still

  auto expect_invalid = [&](const std::string& token, const char* what) {
    Verdict refused = v->verify(bearer(token), {}, kNow);
    BOOST_TEST((refused.outcome == Outcome::kInvalidToken), what << ": " << refused.reason);
    BOOST_TEST(refused.http_status() == 401);
  };
  // The ES256 key's kid on an EdDSA token and the RSA key's kid on an ES256 token.
  expect_invalid(jose::sign_jwt(claims(), "at+jwt", "ke", ed).value(), "EdDSA under an EC kid");
  expect_invalid(jose::sign_jwt(claims(), "at+jwt", "ka", es).value(), "ES256 under an RSA kid");
  // alg none with the signature stripped.
  std::string none = crypto::base64url_encode(R"({"alg":"none","typ":"at+jwt","kid":"ke"})") +
                     by_es.substr(by_es.find('.'), by_es.rfind('.') - by_es.find('.')) + ".x";
  expect_invalid(none, "alg none");
  // The header rewritten to claim RS256 for the EC key's signature.
  std::string rewritten = crypto::base64url_encode(R"({"alg":"RS256","typ":"at+jwt","kid":"ke"})") +
                          by_es.substr(by_es.find('.'));
  expect_invalid(rewritten, "RS256 header on an ES256 key");
}

BOOST_AUTO_TEST_CASE(skew_of_up_to_60_seconds_is_tolerated) {
  FakeJwks jwks;
  auto v = make_verifier(jwks);
  Json::Value c = claims();
  c["exp"] = static_cast<Json::Int64>(kNow - 30);
  c["nbf"] = static_cast<Json::Int64>(kNow + 30);
  c["iat"] = static_cast<Json::Int64>(kNow + 30);
  BOOST_TEST(v->verify(bearer(sign(c)), {}, kNow).valid());
}

BOOST_AUTO_TEST_CASE(no_token_and_other_schemes_are_401_without_error) {
  FakeJwks jwks;
  auto v = make_verifier(jwks);
  BOOST_TEST((v->verify(std::nullopt, {}, kNow).outcome == Outcome::kNoToken));
  BOOST_TEST((v->verify("Basic dXNlcjpwdw==", {}, kNow).outcome == Outcome::kNoToken));
  BOOST_TEST(jwks.calls == 0);  // nothing to verify, nothing fetched
}

BOOST_AUTO_TEST_CASE(a_missing_scope_is_a_403_naming_it) {
  FakeJwks jwks;
  auto v = make_verifier(jwks);
  Verdict verdict = v->verify(bearer(sign(claims("demo:read"))), {"demo:read", "demo:write"}, kNow);
  BOOST_TEST((verdict.outcome == Outcome::kInsufficientScope));
  BOOST_TEST(verdict.missing_scope == "demo:write");
  BOOST_TEST(verdict.http_status() == 403);
  BOOST_TEST(verdict.claims->sub == "usr_01");
}

BOOST_AUTO_TEST_CASE(jwks_is_fetched_once_and_refreshed_on_unknown_kid_at_most_once_a_minute) {
  FakeJwks jwks;
  auto cache = std::make_shared<JwksKeyCache>("https://auth.example.com/keys", jwks.fetcher());
  auto v = Verifier::create({kIssuer, kAudience}, cache).value();
  for (int i = 0; i < 5; ++i) BOOST_TEST(v->verify(bearer(sign(claims())), {}, kNow).valid());
  BOOST_TEST(jwks.calls == 1);
  // A token by a key the cached set lacks, within a minute of the fetch: no refetch.
  const std::string by_b = bearer(sign(claims(), key_b(), "kb"));
  BOOST_TEST(!v->verify(by_b, {}, kNow + 1).valid());
  BOOST_TEST(jwks.calls == 1);
  // A minute on: one refetch, then none for another minute however many such tokens come.
  BOOST_TEST(!v->verify(by_b, {}, kNow + 60).valid());
  BOOST_TEST(jwks.calls == 2);
  for (int i = 0; i < 5; ++i) BOOST_TEST(!v->verify(by_b, {}, kNow + 90).valid());
  BOOST_TEST(jwks.calls == 2);
  // The issuer publishes kb (rotation); the next due refetch finds it.
  jwks.body = jwks_with({{&key_a(), "ka"}, {&key_b(), "kb"}});
  BOOST_TEST(v->verify(by_b, {}, kNow + 120).valid());
  BOOST_TEST(jwks.calls == 3);
}

BOOST_AUTO_TEST_CASE(unreachable_keys_are_unavailable_not_invalid) {
  FakeJwks jwks;
  jwks.fail = true;
  auto v = make_verifier(jwks);
  Verdict verdict = v->verify(bearer(sign(claims())), {}, kNow);
  BOOST_TEST((verdict.outcome == Outcome::kUnavailable));
  BOOST_TEST(verdict.http_status() == 503);
  // Fetch failures are throttled like unknown kids.
  (void)v->verify(bearer(sign(claims())), {}, kNow + 1);
  BOOST_TEST(jwks.calls == 1);
  jwks.fail = false;
  BOOST_TEST(v->verify(bearer(sign(claims())), {}, kNow + 61).valid());
}

// After a failed refetch the cached set may lack a key the issuer published since: a token by a
// kid the set lacks is unavailable (503, retry) until a refetch succeeds, never invalid.
BOOST_AUTO_TEST_CASE(a_kid_the_set_lacks_while_it_cannot_be_refetched_is_unavailable) {
  FakeJwks jwks;
  auto v = make_verifier(jwks);
  const std::string by_a = bearer(sign(claims()));
  const std::string by_b = bearer(sign(claims(), key_b(), "kb"));
  BOOST_TEST(v->verify(by_a, {}, kNow).valid());
  jwks.fail = true;
  Verdict verdict = v->verify(by_b, {}, kNow + 60);
  BOOST_TEST((verdict.outcome == Outcome::kUnavailable));
  BOOST_TEST(jwks.calls == 2);
  // Still throttled, still undecided; the keys it holds still verify.
  BOOST_TEST((v->verify(by_b, {}, kNow + 61).outcome == Outcome::kUnavailable));
  BOOST_TEST(jwks.calls == 2);
  BOOST_TEST(v->verify(bearer(sign(claims("demo:write"))), {}, kNow + 61).valid());
  // Back, and still without kb: now known not to exist.
  jwks.fail = false;
  verdict = v->verify(by_b, {}, kNow + 120);
  BOOST_TEST((verdict.outcome == Outcome::kInvalidToken));
  BOOST_TEST(jwks.calls == 3);
}

struct AcceptingProofs : ProofChecker {
  mutable int calls = 0;
  Verdict check(Verdict verified, std::string_view, const RequestFacts& request,
                int64_t) const override {
    ++calls;
    if (!request.dpop_proof) return Verdict::refuse(Outcome::kInvalidToken, "no proof");
    return verified;
  }
};

BOOST_AUTO_TEST_CASE(dpop_bound_tokens_go_through_the_proof_seam) {
  Json::Value c = claims();
  c["cnf"]["jkt"] = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";
  const std::string token = sign(c);
  FakeJwks jwks;
  // No proof checker: a bound token is never accepted as a bearer token.
  BOOST_TEST(
      (make_verifier(jwks)->verify(bearer(token), {}, kNow).outcome == Outcome::kInvalidToken));
  auto proofs = std::make_shared<AcceptingProofs>();
  auto v = make_verifier(jwks, proofs);
  RequestFacts request;
  std::string header = "DPoP " + token;
  request.authorization = header;
  BOOST_TEST((v->verify(request, {}, kNow).outcome == Outcome::kInvalidToken));
  request.dpop_proof = "proof";
  Verdict verdict = v->verify(request, {"demo:read"}, kNow);
  BOOST_TEST(verdict.valid());
  BOOST_TEST((verdict.scheme == TokenScheme::kDPoP));
  BOOST_TEST(verdict.claims->cnf_jkt == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I");
  BOOST_TEST(proofs->calls == 2);
}

BOOST_AUTO_TEST_CASE(request_url_takes_the_origin_from_configuration) {
  BOOST_TEST(request_url("https://mcp.example.com/mcp", "/mcp?x=1") ==
             "https://mcp.example.com/mcp?x=1");
  BOOST_TEST(request_url("http://127.0.0.1:9000", "/a/b") == "http://127.0.0.1:9000/a/b");
  // An absolute target (an older snippet's $scheme://$http_host$request_uri): its path only, so
  // a forged Host never reaches htu.
  BOOST_TEST(request_url("https://mcp.example.com/mcp", "http://evil.example:8443/mcp?q") ==
             "https://mcp.example.com/mcp?q");
  BOOST_TEST(request_url("https://mcp.example.com/mcp", "http://evil.example") ==
             "https://mcp.example.com/");
  BOOST_TEST(request_url("https://mcp.example.com/mcp", "") == "https://mcp.example.com/");
}

BOOST_AUTO_TEST_CASE(challenges_are_exactly_contract_6) {
  const std::string prm = protected_resource_metadata_url(kAudience);
  BOOST_TEST(prm == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
  BOOST_TEST(protected_resource_metadata_url("https://mcp.example.com") ==
             "https://mcp.example.com/.well-known/oauth-protected-resource");
  BOOST_TEST(protected_resource_metadata_url("http://127.0.0.1:9000/") ==
             "http://127.0.0.1:9000/.well-known/oauth-protected-resource");
  BOOST_TEST(protected_resource_metadata_url("https://h.example/a/b/") ==
             "https://h.example/.well-known/oauth-protected-resource/a/b");

  Verdict none = Verdict::refuse(Outcome::kNoToken, "");
  BOOST_TEST(www_authenticate(none, prm, "") == "Bearer resource_metadata=\"" + prm + "\"");
  BOOST_TEST(www_authenticate(none, prm, "demo:read") ==
             "Bearer scope=\"demo:read\", resource_metadata=\"" + prm + "\"");
  Verdict invalid = Verdict::refuse(Outcome::kInvalidToken, "");
  BOOST_TEST(www_authenticate(invalid, prm, "demo:read") ==
             "Bearer error=\"invalid_token\", scope=\"demo:read\", resource_metadata=\"" + prm +
                 "\"");
  Verdict scope = Verdict::refuse(Outcome::kInsufficientScope, "");
  scope.missing_scope = "demo:write";
  BOOST_TEST(www_authenticate(scope, prm, "demo:read demo:write") ==
             "Bearer error=\"insufficient_scope\", scope=\"demo:write\", resource_metadata=\"" +
                 prm + "\"");
  BOOST_TEST(insufficient_scope_body("demo:write") ==
             R"({"error":"insufficient_scope","error_description":"Required scope: demo:write"})");
  http::Response r = challenge_response(scope, prm, {"demo:read", "demo:write"});
  BOOST_TEST(r.status == 403);
  BOOST_TEST(r.body == insufficient_scope_body("demo:write"));
  BOOST_TEST(r.header("WWW-Authenticate").value_or("") == www_authenticate(scope, prm, ""));
  BOOST_TEST(challenge_response(none, prm, {}).status == 401);
}

BOOST_AUTO_TEST_CASE(one_verifier_serves_many_threads) {
  FakeJwks jwks;
  auto v = make_verifier(jwks);
  const std::string good = bearer(sign(claims()));
  const std::string bad = bearer(sign(claims(), key_b(), "ka"));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (!v->verify(good, {"demo:read"}, kNow).valid()) ++wrong;
        if (v->verify(bad, {}, kNow).valid()) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  BOOST_TEST(wrong == 0);
  BOOST_TEST(jwks.calls == 1);
}

BOOST_AUTO_TEST_CASE(token_cache_holds_claims_until_expiry_and_stays_bounded) {
  TokenCache cache(2, 60);
  auto claims = std::make_shared<AccessClaims>();
  claims->exp = kNow + 10;
  cache.put("t1", claims);
  BOOST_TEST(cache.find("t1", kNow) == claims);
  BOOST_TEST(cache.find("t1", kNow + 69) == claims);  // within the skew allowance
  BOOST_TEST(!cache.find("t1", kNow + 70));           // expired: dropped
  BOOST_TEST(cache.size() == 0u);
  BOOST_TEST(!cache.find("t2", kNow));
  cache.put("a", claims);
  cache.put("b", claims);
  cache.put("c", claims);  // full: starts over
  BOOST_TEST(cache.size() == 1u);
  BOOST_TEST(cache.find("c", kNow) == claims);
}

BOOST_AUTO_TEST_CASE(validation_events_are_counted_and_written_once_per_interval) {
  FakeJwks jwks;
  auto v = make_verifier(jwks);
  ValidationEvents batch(1000);
  events::Recorder recorder;
  batch.drain_if_due(recorder, 0);
  const std::string token = bearer(sign(claims("demo:read")));
  for (int i = 0; i < 5; ++i) {
    batch.record(v->verify(token, {"demo:read"}, kNow), "res_01", "demo:read", "127.0.0.1", "ua");
  }
  batch.record(v->verify(token, {"demo:write"}, kNow), "res_01", "demo:write", "127.0.0.1", "ua");
  batch.record(v->verify(std::nullopt, {}, kNow), "res_01", "", "127.0.0.1", "ua");
  batch.record(v->verify(token, {}, kNow), "res_01", "", "127.0.0.1", "ua", "revoked");
  batch.drain_if_due(recorder, 999);
  BOOST_TEST(recorder.empty());  // not yet due
  batch.drain_if_due(recorder, 1000);
  BOOST_TEST(recorder.size() == 4u);
  BOOST_TEST(batch.pending() == 0u);
}

BOOST_AUTO_TEST_CASE(jwks_fetcher_allows_plain_http_to_loopback_only) {
  outbound::Options options;
  options.allow_loopback_http = true;
  options.timeout = std::chrono::milliseconds(500);
  auto fetch = outbound_jwks_fetcher(options);
  auto refused = fetch("http://192.0.2.1/keys");
  BOOST_TEST((refused.status().code() == Code::kInvalidArgument));
  BOOST_TEST((fetch("http://localhost/keys").status().code() == Code::kInvalidArgument));
  // Loopback is allowed: nothing listens on port 1, so the connection itself fails.
  BOOST_TEST((fetch("http://127.0.0.1:1/keys").status().code() == Code::kUnavailable));
  auto strict = outbound_jwks_fetcher();
  BOOST_TEST((strict("http://127.0.0.1:1/keys").status().code() == Code::kInvalidArgument));
}

}  // namespace
