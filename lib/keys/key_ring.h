// A worker's in-memory view of the signing keys: private keys unsealed and parsed once, the
// current signer picked by time, the JWKS document pre-serialised. Every worker refreshes it
// from the store on its own schedule; because a new key is published for a whole
// pre-publication window before it signs, no coordination between workers or nodes is needed.
//
// Not thread-safe (one per worker process).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "crypto/aead.h"
#include "crypto/rsa.h"
#include "jose/jws_key.h"
#include "store/db.h"

namespace portcullis::keys {

struct LiveKey {
  std::string id;
  jose::JwsPrivateKey private_key;  // its alg is the key's algorithm
  jose::JwsPublicKey public_key;
  std::string public_jwk;  // JSON text
  int64_t activates_at = 0;
  std::optional<int64_t> retires_at;
  std::optional<int64_t> expires_at;
};

class KeyRing {
 public:
  KeyRing(store::Db& db, const crypto::MasterKey& master_key, const config::Config& config)
      : db_(db), master_key_(master_key), config_(config) {}

  // Reloads when never loaded or when the last load is older than the refresh interval. On a
  // store failure the previous keys stay in use (and the error is returned for logging).
  Status refresh_if_stale(int64_t now);
  Status reload(int64_t now);

  bool loaded() const { return loaded_; }
  // The key of `alg` that signs at `now`: the latest activated one. nullptr when there is none.
  const LiveKey* signer(int64_t now, jose::JwsAlg alg = jose::JwsAlg::kRS256) const;
  // The public key for `kid` with its algorithm, if it is still published.
  const jose::JwsPublicKey* verification_key(std::string_view kid) const;
  // The RSA public key for `kid`, if it is still published and an RS256 key (management tokens,
  // which are always RS256).
  const crypto::RsaPublicKey* public_key(std::string_view kid) const;
  // {"keys":[...]} with every key published at `now` (next, current and retiring).
  std::string jwks_json(int64_t now) const;

 private:
  store::Db& db_;
  const crypto::MasterKey& master_key_;
  const config::Config& config_;
  std::vector<LiveKey> keys_;  // ordered by activates_at
  bool loaded_ = false;
  int64_t loaded_at_ = 0;
};

}  // namespace portcullis::keys
