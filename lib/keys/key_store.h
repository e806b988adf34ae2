// Signing keys in the store: creation, publish-before-use rotation, and loading.
//
// Lifecycle of a key (times in Unix seconds, contract §1):
//   created_at ── published in /keys ── activates_at ── signs ── retires_at ── expires_at
// A rotated-in key activates `key_prepublish_seconds` after its creation, so every cache that
// honours /keys' max-age (bounded by that window) already holds it when the first token it
// signs arrives. The key it replaces retires at that moment and stays published until every
// token it signed has expired (retires_at + longest token lifetime + clock skew).
// Private keys are stored sealed (AES-256-GCM, master key, aad = key id); they are unsealed only
// in memory, by KeyRing.
//
// Each algorithm of jose::kAccessTokenAlgs (RS256, ES256, EdDSA) has its own keys and its own
// lifecycle: a resource's tokens are signed by the current key of the resource's algorithm, and
// rotating one algorithm's key never retires another's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "crypto/aead.h"
#include "jose/jws_key.h"
#include "store/db.h"

namespace portcullis::keys {

struct StoredKey {
  std::string id;
  jose::JwsAlg alg = jose::JwsAlg::kRS256;
  std::string private_key_sealed;
  std::string public_jwk;  // JSON text
  int64_t created_at = 0;
  int64_t activates_at = 0;
  std::optional<int64_t> retires_at;
  std::optional<int64_t> expires_at;
};

class KeyStore {
 public:
  KeyStore(store::Db& db, const crypto::MasterKey& master_key, const config::Config& config)
      : db_(db), master_key_(master_key), config_(config) {}

  // For every algorithm without a live key (a fresh environment, or one from before ES256 and
  // EdDSA): a key that signs at once, since nothing can have cached a key of that algorithm.
  // Does nothing and returns ok when every algorithm has a live key.
  Status ensure_initial_key(int64_t now);
  // For each of `algs`: adds a key that activates after the pre-publication window and
  // schedules the retirement of the keys of that algorithm it replaces. Returns the new keys'
  // ids, in the order of `algs`.
  Result<std::vector<std::string>> rotate(
      int64_t now, std::span<const jose::JwsAlg> algs = jose::kAccessTokenAlgs);
  // Every key still published at `now` (not expired), oldest activation first.
  Result<std::vector<StoredKey>> load_published(int64_t now);

 private:
  // Generates and seals a key; nothing is written.
  Result<StoredKey> new_key(jose::JwsAlg alg, int64_t now, int64_t activates_at);
  Status insert(const StoredKey& key);

  store::Db& db_;
  const crypto::MasterKey& master_key_;
  const config::Config& config_;
};

// Seconds a retired key stays published after it stopped signing.
int64_t retired_key_grace_seconds(const config::Config& config);

}  // namespace portcullis::keys
