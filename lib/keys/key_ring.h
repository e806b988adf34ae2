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
#include "jose/jwt.h"
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

  // A kid the ring does not hold makes find_verification_key reload it, at most this often.
  static constexpr int64_t kUnknownKidReloadSeconds = 60;

  // Reloads when never loaded or when the last load is older than the refresh interval. On a
  // store failure the previous keys stay in use (and the error is returned for logging); the
  // next attempt is a second later, not on every request while the store is away (until then
  // a ring never loaded answers unavailable).
  Status refresh_if_stale(int64_t now);
  Status reload(int64_t now);

  bool loaded() const { return loaded_; }
  // The key of `alg` that signs at `now`: the latest activated one. nullptr when there is none.
  const LiveKey* signer(int64_t now, jose::JwsAlg alg = jose::JwsAlg::kRS256) const;

  // The key that verifies a token naming `kid`, at `now`: every verifier of the workers' tokens
  // (management bearer auth, introspection, the validator and the demo MCP server through
  // validation::KeyRingKeys) asks here. The ring is refreshed first when stale; a kid it does
  // not hold makes it reload once more (a key another node made a moment ago), at most once per
  // kUnknownKidReloadSeconds however many made-up kids arrive. Answers
  //   - the key, when kid is published (even while the store is away: the ring is old, not gone);
  //   - nullptr, when the ring, read from the store within the refresh interval, has no such
  //     key: the token is not valid;
  //   - unavailable (Retry-After), when the ring does not hold kid and its last refresh failed
  //     (the store is away). An idle worker's ring may predate a key rotated in since, and a new
  //     worker's is empty, so the token may well be good: nothing can be decided. Callers answer
  //     their family's "temporarily unavailable" (503, retry), never "invalid".
  Result<const jose::JwsPublicKey*> find_verification_key(std::string_view kid, int64_t now);
  // jose::verify_jws with the key find_verification_key names for the token's kid, only of
  // `alg` when given (management tokens are always RS256): unauthenticated for a token that is
  // not valid, unavailable (as above) when its key cannot be known now.
  Result<jose::DecodedJwt> verify(std::string_view token, int64_t now,
                                  std::optional<jose::JwsAlg> alg = std::nullopt);

  // The public key for `kid` with its algorithm, if the ring holds it (no refresh: see
  // find_verification_key).
  const jose::JwsPublicKey* verification_key(std::string_view kid) const;
  // {"keys":[...]} with every key published at `now` (next, current and retiring).
  std::string jwks_json(int64_t now) const;

 private:
  bool stale(int64_t now) const { return now >= next_load_at_; }

  store::Db& db_;
  const crypto::MasterKey& master_key_;
  const config::Config& config_;
  std::vector<LiveKey> keys_;  // ordered by activates_at
  bool loaded_ = false;
  int64_t next_load_at_ = INT64_MIN;  // when refresh_if_stale next reads the store
  // Whether the last load attempt failed: the ring may lack keys published since its last load.
  bool refresh_failed_ = false;
  int64_t unknown_kid_reload_at_ = INT64_MIN / 2;
};

}  // namespace portcullis::keys
