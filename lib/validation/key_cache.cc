#include "validation/key_cache.h"

#include "jose/jwk.h"
#include "log/log.h"
#include "validation/verifier.h"

namespace portcullis::validation {

JwksFetcher outbound_jwks_fetcher(outbound::Options options) {
  options.max_body_bytes = jose::kMaxJwksBytes;
  options.accept = "application/jwk-set+json, application/json";
  return [options = std::move(options)](const std::string& url) -> Result<std::string> {
    PORTCULLIS_ASSIGN_OR_RETURN(outbound::Response response, outbound::https_get(url, options));
    if (response.status != 200) {
      return Status::unavailable("the JWKS endpoint answered HTTP " +
                                 std::to_string(response.status));
    }
    return std::move(response.body);
  };
}

JwksKeyCache::JwksKeyCache(std::string jwks_url, JwksFetcher fetcher, JwksCacheOptions options)
    : url_(std::move(jwks_url)), fetcher_(std::move(fetcher)), options_(options) {}

int64_t JwksKeyCache::fetch_count() const {
  std::shared_lock lock(mu_);
  return fetches_;
}

Status JwksKeyCache::fetch_locked(int64_t now) {
  {
    std::unique_lock lock(mu_);
    attempted_ = true;
    last_attempt_ = now;
    ++fetches_;
  }
  if (!fetcher_) return Status::internal("the JWKS cache has no fetcher");
  auto failed = [&](Status st) {
    std::unique_lock lock(mu_);
    last_fetch_failed_ = true;
    return st;
  };
  auto body = fetcher_(url_);
  if (!body) {
    log::warn("JWKS fetch failed", {{"url", url_}, {"error", body.status().to_string()}});
    return failed(body.status());
  }
  auto parsed = jose::parse_jws_jwks(*body);
  if (!parsed) {
    log::warn("JWKS refused", {{"url", url_}, {"error", parsed.status().to_string()}});
    return failed(
        Status::unavailable("the JWKS document is not usable: " + parsed.status().message()));
  }
  auto map = std::make_shared<KeyMap>();
  for (auto& [kid, key] : *parsed) {
    if (kid.empty()) continue;  // a token must name its key
    map->emplace(kid, std::make_shared<const jose::JwsPublicKey>(std::move(key)));
  }
  std::unique_lock lock(mu_);
  keys_ = std::move(map);
  fetched_at_ = now;
  last_fetch_failed_ = false;
  return Status::ok();
}

Status JwksKeyCache::refresh(int64_t now) {
  std::lock_guard fetch_lock(fetch_mu_);
  return fetch_locked(now);
}

Result<std::shared_ptr<const jose::JwsPublicKey>> JwksKeyCache::find(std::string_view kid,
                                                                     int64_t now) {
  // Fast path: a shared lock, one map lookup, one reference count increment.
  {
    std::shared_lock lock(mu_);
    if (keys_ && now - fetched_at_ < options_.max_age_seconds) {
      auto it = keys_->find(kid);
      if (it != keys_->end()) return it->second;
    }
  }
  {
    // Taken even when no fetch is due: a thread arriving while another fetches waits for that
    // fetch's keys instead of answering from the set it is replacing (or from none at all).
    std::lock_guard fetch_lock(fetch_mu_);
    bool due = false;
    {
      std::shared_lock lock(mu_);
      due = !attempted_ || now - last_attempt_ >= options_.min_refresh_seconds;
    }
    if (due) (void)fetch_locked(now);
  }
  // The set as it now is; a stale one still answers while a refetch is not due or failed.
  std::shared_lock lock(mu_);
  if (!keys_) return Status::unavailable("the issuer's keys could not be loaded");
  auto it = keys_->find(kid);
  if (it != keys_->end()) return it->second;
  // A kid the set lacks while it cannot be refetched may be a key published since: undecided.
  if (last_fetch_failed_) return Status::unavailable("the issuer's keys cannot be refetched now");
  return std::shared_ptr<const jose::JwsPublicKey>();
}

Result<std::shared_ptr<const jose::JwsPublicKey>> KeyRingKeys::find(std::string_view kid,
                                                                    int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(const jose::JwsPublicKey* key, ring_.find_verification_key(kid, now));
  // Aliasing constructor with no owner: no allocation, the ring owns the key.
  return std::shared_ptr<const jose::JwsPublicKey>(std::shared_ptr<void>(), key);
}

// Defined here, beside the JWKS cache it builds, so verifier.cc needs no HTTP client (the fuzz
// target links the verifier alone).
Result<std::shared_ptr<Verifier>> Verifier::for_jwks(VerifierConfig config, std::string jwks_url,
                                                     outbound::Options fetch_options) {
  if (jwks_url.empty()) return Status::invalid_argument("a verifier needs the JWKS URL");
  auto keys = std::make_shared<JwksKeyCache>(std::move(jwks_url),
                                             outbound_jwks_fetcher(std::move(fetch_options)));
  return create(std::move(config), std::move(keys));
}

}  // namespace portcullis::validation
