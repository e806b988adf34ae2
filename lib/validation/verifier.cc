#include "validation/verifier.h"

#include "format/json.h"
#include "format/scope_list.h"
#include "jose/claims.h"
#include "jose/jwt.h"

namespace portcullis::validation {
namespace {

constexpr std::string_view kAccessTokenTyp = "at+jwt";

// A string claim into `out`; false when present but not a string. Absent leaves `out` empty.
bool read_string(const Json::Value& claims, std::string_view name, std::string& out) {
  const Json::Value* m = json::find_member(claims, name);
  if (m == nullptr) return true;
  if (!m->isString()) return false;
  out = m->asString();
  return true;
}

bool read_time(const Json::Value& claims, std::string_view name, int64_t& out) {
  const Json::Value* m = json::find_member(claims, name);
  if (m == nullptr) return true;
  if (!m->isNumeric()) return false;
  if (m->isInt64()) {
    out = m->asInt64();
    return true;
  }
  // A NumericDate outside int64 (or NaN) is malformed: casting it would be undefined behaviour.
  const double seconds = m->asDouble();
  if (!(seconds > -9.2e18 && seconds < 9.2e18)) return false;
  out = static_cast<int64_t>(seconds);
  return true;
}

}  // namespace

Verdict claims_from_json(const Json::Value& json_claims) {
  auto claims = std::make_shared<AccessClaims>();
  bool ok =
      read_string(json_claims, "iss", claims->iss) &&
      read_string(json_claims, "sub", claims->sub) &&
      read_string(json_claims, "client_id", claims->client_id) &&
      read_string(json_claims, "scope", claims->scope) &&
      read_string(json_claims, "email", claims->email) &&
      read_string(json_claims, "org_id", claims->org_id) &&
      read_string(json_claims, "jti", claims->jti) && read_time(json_claims, "exp", claims->exp) &&
      read_time(json_claims, "iat", claims->iat) && read_time(json_claims, "nbf", claims->nbf);
  if (!ok) return Verdict::refuse(Outcome::kInvalidToken, "a token claim has the wrong type");
  if (const Json::Value* aud = json::find_member(json_claims, "aud"); aud && aud->isString()) {
    claims->aud = aud->asString();
  }
  if (const Json::Value* cnf = json::find_member(json_claims, "cnf")) {
    const Json::Value* jkt = cnf->isObject() ? json::find_member(*cnf, "jkt") : nullptr;
    if (jkt == nullptr || !jkt->isString() || jkt->asString().empty()) {
      return Verdict::refuse(Outcome::kInvalidToken, "token cnf claim has no jkt");
    }
    claims->cnf_jkt = jkt->asString();
  }
  if (claims->sub.empty() || claims->client_id.empty() || claims->jti.empty()) {
    return Verdict::refuse(Outcome::kInvalidToken, "token lacks sub, client_id or jti");
  }
  claims->scopes = format::scope_list(claims->scope);
  Verdict v;
  v.outcome = Outcome::kValid;
  v.claims = std::move(claims);
  return v;
}

Result<std::shared_ptr<Verifier>> Verifier::create(VerifierConfig config,
                                                   std::shared_ptr<KeySource> keys,
                                                   std::shared_ptr<const ProofChecker> proofs) {
  if (config.issuer.empty() || config.audience.empty()) {
    return Status::invalid_argument("a verifier needs an issuer and an audience");
  }
  if (config.leeway_seconds < 0 || config.leeway_seconds > kMaxLeewaySeconds) {
    return Status::invalid_argument("the clock skew allowance must be 0 to 60 seconds");
  }
  if (!keys) return Status::invalid_argument("a verifier needs a key source");
  return std::make_shared<Verifier>(Checked{}, std::move(config), std::move(keys),
                                    std::move(proofs));
}

Verdict Verifier::verify_token(std::string_view token, int64_t now) const {
  // The key lookup may fail for want of keys (503) rather than for the token (401): remember
  // which, since verify_jws only reports "no key".
  Status key_problem;
  std::shared_ptr<const jose::JwsPublicKey> held;
  auto decoded = jose::verify_jws(token, [&](std::string_view kid) -> const jose::JwsPublicKey* {
    auto found = keys_->find(kid, now);
    if (!found) {
      key_problem = found.status();
      return nullptr;
    }
    held = std::move(found).value();
    return held.get();
  });
  if (!key_problem.is_ok()) return Verdict::refuse(Outcome::kUnavailable, key_problem.message());
  if (!decoded) return Verdict::refuse(Outcome::kInvalidToken, decoded.status().message());

  jose::ClaimChecks checks;
  checks.issuer = config_.issuer;
  checks.audience = config_.audience;
  checks.typ = std::string(kAccessTokenTyp);
  checks.now = now;
  checks.leeway_seconds = config_.leeway_seconds;
  if (Status st = jose::check_claims(*decoded, checks); !st.is_ok()) {
    return Verdict::refuse(Outcome::kInvalidToken, st.message());
  }
  // contract §4: aud is one string; an array naming us too is another resource's token as well.
  const Json::Value* aud = json::find_member(decoded->claims, "aud");
  if (aud == nullptr || !aud->isString()) {
    return Verdict::refuse(Outcome::kInvalidToken, "token aud must be a single string");
  }
  return claims_from_json(decoded->claims);
}

bool Verifier::needs_proof(const Verdict& verified) {
  return verified.scheme == TokenScheme::kDPoP ||
         (verified.claims && !verified.claims->cnf_jkt.empty());
}

Verdict Verifier::check_scopes(Verdict verified, const std::vector<std::string>& required_scopes) {
  if (!verified.valid() || !verified.claims) return verified;
  std::string missing;
  for (const std::string& scope : required_scopes) {
    if (verified.claims->has_scope(scope)) continue;
    if (!missing.empty()) missing += ' ';
    missing += scope;
  }
  if (!missing.empty()) {
    verified.outcome = Outcome::kInsufficientScope;
    verified.reason = "token lacks a required scope";
    verified.missing_scope = std::move(missing);
  }
  return verified;
}

std::optional<Verdict> Verifier::extraction_refusal(const ExtractedToken& extracted) {
  std::optional<Verdict> v;
  switch (extracted.problem) {
    case ExtractProblem::kNone:
      return v;
    case ExtractProblem::kMissing:
      v = Verdict::refuse(Outcome::kNoToken, "no Authorization header");
      break;
    case ExtractProblem::kNotBearer:
      v = Verdict::refuse(Outcome::kNoToken, "the Authorization header is not Bearer");
      break;
    case ExtractProblem::kMalformed:
      v = Verdict::refuse(Outcome::kInvalidToken, "the Authorization header is malformed");
      break;
  }
  v->scheme = extracted.scheme;
  return v;
}

Verdict Verifier::verify(const RequestFacts& request,
                         const std::vector<std::string>& required_scopes, int64_t now,
                         TokenCache* cache) const {
  const ExtractedToken extracted = extract_token(request.authorization);
  if (auto refused = extraction_refusal(extracted)) return *std::move(refused);
  Verdict verdict;
  if (auto claims = cache ? cache->find(extracted.token, now) : nullptr) {
    verdict.outcome = Outcome::kValid;
    verdict.claims = std::move(claims);
  } else {
    verdict = verify_token(extracted.token, now);
    if (cache && verdict.valid()) cache->put(extracted.token, verdict.claims);
  }
  verdict.scheme = extracted.scheme;
  if (!verdict.valid()) return verdict;
  if (needs_proof(verdict)) {
    // The DPoP seam: the one place a proof check slots in.
    if (!proofs_) {
      Verdict refused = Verdict::refuse(
          Outcome::kInvalidToken, "a DPoP-bound token needs a proof this server cannot check");
      refused.scheme = extracted.scheme;
      return refused;
    }
    verdict = proofs_->check(std::move(verdict), extracted.token, request, now);
    if (!verdict.valid()) return verdict;
  }
  return check_scopes(std::move(verdict), required_scopes);
}

Verdict Verifier::verify(std::optional<std::string_view> authorization,
                         const std::vector<std::string>& required_scopes, int64_t now) const {
  RequestFacts request;
  request.authorization = authorization;
  return verify(request, required_scopes, now);
}

}  // namespace portcullis::validation
