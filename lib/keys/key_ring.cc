#include "keys/key_ring.h"

#include <openssl/crypto.h>

#include <algorithm>

#include "keys/key_store.h"
#include "log/log.h"

namespace portcullis::keys {

Status KeyRing::refresh_if_stale(int64_t now) {
  if (stale(now)) return reload(now);
  if (!loaded_) return Status::unavailable("the signing keys cannot be read now");
  return Status::ok();
}

Status KeyRing::reload(int64_t now) {
  KeyStore store(db_, master_key_, config_);
  auto stored = store.load_published(now);
  if (!stored) {
    // Try again soon, but not on every request while the store is away.
    next_load_at_ = now + 1;
    refresh_failed_ = true;
    return stored.status();
  }
  std::vector<LiveKey> fresh;
  fresh.reserve(stored->size());
  for (const StoredKey& k : *stored) {
    // Keys already parsed are reused: unsealing and parsing RSA keys is the expensive part.
    auto existing = std::find_if(keys_.begin(), keys_.end(),
                                 [&](const LiveKey& live) { return live.id == k.id; });
    if (existing != keys_.end()) {
      existing->retires_at = k.retires_at;
      existing->expires_at = k.expires_at;
      fresh.push_back(std::move(*existing));
      continue;
    }
    auto der = master_key_.open(k.private_key_sealed, k.id);
    if (!der) {
      log::error("cannot unseal signing key: wrong master key?", {{"kid", k.id}});
      continue;
    }
    auto private_key = jose::JwsPrivateKey::from_pkcs8_der(k.alg, *der);
    OPENSSL_cleanse(der->data(), der->size());
    Result<jose::JwsPublicKey> public_key =
        private_key ? private_key->public_key() : Result<jose::JwsPublicKey>(private_key.status());
    if (!public_key) {
      log::error("cannot parse signing key", {{"kid", k.id}});
      continue;
    }
    fresh.push_back(LiveKey{k.id, std::move(private_key).value(), std::move(public_key).value(),
                            k.public_jwk, k.activates_at, k.retires_at, k.expires_at});
  }
  keys_ = std::move(fresh);
  loaded_ = true;
  next_load_at_ = now + config_.keyring_refresh_seconds;
  refresh_failed_ = false;
  return Status::ok();
}

const LiveKey* KeyRing::signer(int64_t now, jose::JwsAlg alg) const {
  const LiveKey* best = nullptr;
  for (const LiveKey& k : keys_) {
    if (k.private_key.alg() == alg && k.activates_at <= now &&
        (!k.expires_at || *k.expires_at > now)) {
      best = &k;
    }
  }
  return best;
}

Result<const jose::JwsPublicKey*> KeyRing::find_verification_key(std::string_view kid,
                                                                 int64_t now) {
  const bool refreshing = stale(now);
  if (refreshing) (void)reload(now);  // a failure is remembered in refresh_failed_
  const jose::JwsPublicKey* key = verification_key(kid);
  // Not again when this very lookup has just read the store (or failed to).
  if (key == nullptr && !refreshing && now - unknown_kid_reload_at_ >= kUnknownKidReloadSeconds) {
    unknown_kid_reload_at_ = now;
    (void)reload(now);
    key = verification_key(kid);
  }
  if (key == nullptr && refresh_failed_) {
    return Status::unavailable("the signing keys cannot be read now");
  }
  return key;
}

Result<jose::DecodedJwt> KeyRing::verify(std::string_view token, int64_t now,
                                         std::optional<jose::JwsAlg> alg) {
  Status lookup;
  auto decoded = jose::verify_jws(token, [&](std::string_view kid) -> const jose::JwsPublicKey* {
    auto found = find_verification_key(kid, now);
    if (!found) {
      lookup = found.status();
      return nullptr;
    }
    const jose::JwsPublicKey* key = *found;
    return key != nullptr && (!alg || key->alg() == *alg) ? key : nullptr;
  });
  if (!decoded && !lookup.is_ok()) return lookup;
  return decoded;
}

const jose::JwsPublicKey* KeyRing::verification_key(std::string_view kid) const {
  for (const LiveKey& k : keys_) {
    if (k.id == kid) return &k.public_key;
  }
  return nullptr;
}

std::string KeyRing::jwks_json(int64_t now) const {
  std::string out = "{\"keys\":[";
  bool first = true;
  for (const LiveKey& k : keys_) {
    if (k.expires_at && *k.expires_at <= now) continue;
    if (!first) out += ',';
    out += k.public_jwk;
    first = false;
  }
  out += "]}";
  return out;
}

}  // namespace portcullis::keys
