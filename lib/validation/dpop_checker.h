// The DPoP proof check (RFC 9449 §7) for the verifier's seam (verifier.h): a token bound to a
// key (cnf.jkt) is valid only with the DPoP scheme and a fresh proof by that key for this very
// request (htm, htu, iat, ath), whose jti was never seen before. The rules live in
// lib/dpop/presentation.h; this adapts them to Verdicts.
#pragma once

#include <cstdint>
#include <memory>

#include "dpop/presentation.h"
#include "store/db.h"
#include "validation/verifier.h"

namespace portcullis::validation {

class DpopProofChecker final : public ProofChecker {
 public:
  // `remember` keeps jtis against replay: dpop::ReplayCache in Portcullis' own workers (shared
  // by every worker and node), any equivalent store elsewhere. It is called from check(), so it
  // must be as thread-safe as the Verifier's use.
  DpopProofChecker(int64_t iat_leeway_seconds, dpop::RememberProof remember)
      : iat_leeway_seconds_(iat_leeway_seconds), remember_(std::move(remember)) {}

  // The checker of Portcullis' own workers: jtis go to the cluster-wide dpop::ReplayCache in
  // `db` (which must outlive the checker; a worker's connection does).
  static std::shared_ptr<const DpopProofChecker> over_replay_cache(store::Db& db,
                                                                   int64_t iat_leeway_seconds);

  // `verified` back when the proof holds; else kInvalidToken with dpop_error set (the challenge
  // then uses the DPoP scheme), or kUnavailable when the replay store cannot answer.
  Verdict check(Verdict verified, std::string_view token, const RequestFacts& request,
                int64_t now) const override;

 private:
  const int64_t iat_leeway_seconds_;
  const dpop::RememberProof remember_;
};

}  // namespace portcullis::validation
