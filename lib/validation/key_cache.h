// Where a verifier gets the keys (RS256, ES256 or EdDSA) for a token's kid (Envoy jwt_authn's "JWKS
// cache").
//
// Two sources:
//  - JwksKeyCache: for resource servers anywhere. Fetches the issuer's JWKS (`{base_url}/keys`)
//    once, on first use, over HTTPS with lib/outbound (http:// only for a loopback address, for
//    local stacks), keeps it, and fetches again when a token names a kid it does not know — at
//    most once per `min_refresh_seconds` (default 60) however many such tokens arrive, so a
//    flood of made-up kids costs one fetch a minute. A set older than `max_age_seconds` is
//    refetched on the next lookup (so a withdrawn key stops being trusted). A failed fetch keeps
//    the previous set; until a fetch succeeds again, a kid it lacks is unavailable (it may be a
//    key published since), not unknown. Thread-safe: lookups of known kids share a lock; a miss
//    waits for any fetch in flight (so concurrent first requests all see the first fetch's
//    keys), and one thread at a time fetches.
//  - KeyRingKeys: Portcullis' own workers (the nginx auth_request validator) read the key ring
//    they already hold (lib/keys), refreshed from the database; no HTTP round trip. One thread
//    only, like the KeyRing it wraps.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "core/status.h"
#include "jose/jws_key.h"
#include "keys/key_ring.h"
#include "outbound/https_get.h"

namespace portcullis::validation {

class KeySource {
 public:
  virtual ~KeySource() = default;
  // The key named kid: nullptr when the source has no such key (the token is invalid);
  // unavailable when it does not hold kid and could not refresh its keys (no set loaded at
  // all, or the last refresh failed): nothing can be decided. The key stays valid as long as
  // the returned pointer is held.
  virtual Result<std::shared_ptr<const jose::JwsPublicKey>> find(std::string_view kid,
                                                                 int64_t now) = 0;
};

// GETs a JWKS document: the body of a 200 response, else an error Status.
using JwksFetcher = std::function<Result<std::string>(const std::string& url)>;

// A fetcher on lib/outbound's guarded GET (https; http only for a loopback IP literal).
JwksFetcher outbound_jwks_fetcher(outbound::Options options = {});

struct JwksCacheOptions {
  int64_t min_refresh_seconds = 60;
  int64_t max_age_seconds = 3600;
};

class JwksKeyCache final : public KeySource {
 public:
  JwksKeyCache(std::string jwks_url, JwksFetcher fetcher, JwksCacheOptions options = {});

  Result<std::shared_ptr<const jose::JwsPublicKey>> find(std::string_view kid,
                                                         int64_t now) override;
  // Fetches now, whatever the schedule (start-up warm-up, tests). Keeps the old set on failure.
  Status refresh(int64_t now);
  // How many fetches were attempted (tests, metrics).
  int64_t fetch_count() const;

 private:
  using KeyMap = std::map<std::string, std::shared_ptr<const jose::JwsPublicKey>, std::less<>>;
  Status fetch_locked(int64_t now);  // REQUIRES: fetch_mu_ held

  const std::string url_;
  const JwksFetcher fetcher_;
  const JwksCacheOptions options_;
  mutable std::shared_mutex mu_;  // guards keys_, fetched_at_, last_attempt_, last_fetch_failed_
  std::shared_ptr<const KeyMap> keys_;
  int64_t fetched_at_ = 0;
  int64_t last_attempt_ = 0;
  bool attempted_ = false;
  bool last_fetch_failed_ = false;
  int64_t fetches_ = 0;
  std::mutex fetch_mu_;  // one fetch at a time
};

class KeyRingKeys final : public KeySource {
 public:
  explicit KeyRingKeys(keys::KeyRing& ring) : ring_(ring) {}

  // KeyRing::find_verification_key: an unknown kid reloads the ring at most once a minute, and
  // a kid the ring does not hold while it cannot be refreshed is unavailable. Non-owning: valid
  // until the ring next reloads, i.e. for the rest of this request.
  Result<std::shared_ptr<const jose::JwsPublicKey>> find(std::string_view kid,
                                                         int64_t now) override;

 private:
  keys::KeyRing& ring_;
};

}  // namespace portcullis::validation
