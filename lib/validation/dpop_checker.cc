#include "validation/dpop_checker.h"

#include "dpop/replay_cache.h"

namespace portcullis::validation {

std::shared_ptr<const DpopProofChecker> DpopProofChecker::over_replay_cache(
    store::Db& db, int64_t iat_leeway_seconds) {
  return std::make_shared<DpopProofChecker>(
      iat_leeway_seconds,
      [&db](const dpop::VerifiedProof& proof) { return dpop::ReplayCache(db).remember(proof); });
}

Verdict DpopProofChecker::check(Verdict verified, std::string_view token,
                                const RequestFacts& request, int64_t now) const {
  dpop::Presentation presentation;
  presentation.dpop_scheme = verified.scheme == TokenScheme::kDPoP;
  presentation.access_token = token;
  presentation.proof = request.dpop_proof;
  presentation.method = request.method;
  presentation.url = request.url;
  presentation.now = now;
  presentation.iat_leeway_seconds = iat_leeway_seconds_;
  const std::string_view bound = verified.claims ? verified.claims->cnf_jkt : std::string_view();
  const Status st = dpop::check_presentation(bound, presentation, remember_);
  if (st.is_ok()) return verified;
  Verdict refused = Verdict::refuse(
      st.code() == Code::kUnavailable ? Outcome::kUnavailable : Outcome::kInvalidToken,
      st.message());
  refused.scheme = verified.scheme;
  refused.dpop_error = st.reason();
  return refused;
}

}  // namespace portcullis::validation
