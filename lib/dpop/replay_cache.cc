#include "dpop/replay_cache.h"

#include "crypto/hash.h"

namespace portcullis::dpop {

Status ReplayCache::remember(const VerifiedProof& proof) {
  auto inserted =
      db_.execute("INSERT INTO dpop_proof_jtis (jkt, jti_hash, expires_at) VALUES (?, ?, ?)",
                  {proof.jkt, crypto::sha256(proof.jti), proof.replay_window_end});
  if (inserted) return Status::ok();
  if (inserted.status().code() == Code::kAlreadyExists) {
    return invalid_proof("DPoP proof was already used (jti)");
  }
  return inserted.status();
}

Status ReplayCache::prune(int64_t now) {
  return db_.execute("DELETE FROM dpop_proof_jtis WHERE expires_at < ?", {now}).status();
}

}  // namespace portcullis::dpop
