// The jti replay check of RFC 9449 §11.1, shared by every worker and node through the
// database: a proof is accepted once. Each check is a single INSERT into a table keyed by
// (jkt, SHA-256(jti)); a duplicate key means the proof was seen before. Rows outlive the
// proof's iat window and are then pruned.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "dpop/proof.h"
#include "store/db.h"

namespace portcullis::dpop {

class ReplayCache {
 public:
  explicit ReplayCache(store::Db& db) : db_(db) {}

  // Ok the first time a (jkt, jti) pair is presented; invalid_argument with reason
  // invalid_dpop_proof when it was presented before; Unavailable when the store is down (the
  // proof is then not accepted: failing open would allow replays).
  Status remember(const VerifiedProof& proof);

  // Forgets pairs whose proofs can no longer pass the iat check.
  Status prune(int64_t now);

 private:
  store::Db& db_;
};

}  // namespace portcullis::dpop
