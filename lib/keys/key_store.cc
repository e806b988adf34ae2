#include "keys/key_store.h"

#include <openssl/crypto.h>

#include <algorithm>

#include "core/ids.h"
#include "format/json.h"
#include "jose/jwk.h"
#include "log/log.h"

namespace portcullis::keys {
namespace {

constexpr int64_t kClockSkewSeconds = 60;
constexpr const char* kSelectPublished =
    "SELECT id, private_key_sealed, public_jwk, created_at, activates_at, retires_at, expires_at, "
    "algorithm FROM signing_keys WHERE expires_at IS NULL OR expires_at > ? ORDER BY activates_at, "
    "id";

}  // namespace

int64_t retired_key_grace_seconds(const config::Config& config) {
  return config.max_token_lifetime_seconds + kClockSkewSeconds;
}

Result<StoredKey> KeyStore::new_key(jose::JwsAlg alg, int64_t now, int64_t activates_at) {
  PORTCULLIS_ASSIGN_OR_RETURN(jose::JwsPrivateKey key, jose::JwsPrivateKey::generate(alg));
  StoredKey k;
  k.id = new_id("key_");
  k.alg = alg;
  PORTCULLIS_ASSIGN_OR_RETURN(std::string der, key.to_pkcs8_der());
  auto sealed = master_key_.seal(der, k.id);
  OPENSSL_cleanse(der.data(), der.size());
  PORTCULLIS_ASSIGN_OR_RETURN(k.private_key_sealed, std::move(sealed));
  PORTCULLIS_ASSIGN_OR_RETURN(jose::JwsPublicKey public_key, key.public_key());
  k.public_jwk = json::write(public_key.jwk(k.id));
  k.created_at = now;
  k.activates_at = activates_at;
  return k;
}

Status KeyStore::insert(const StoredKey& k) {
  return db_
      .execute(
          "INSERT INTO signing_keys (id, algorithm, private_key_sealed, public_jwk, "
          "created_at, activates_at) VALUES (?, ?, ?, ?, ?, ?)",
          {k.id, std::string(jose::alg_name(k.alg)), k.private_key_sealed, k.public_jwk,
           k.created_at, k.activates_at})
      .status();
}

Status KeyStore::ensure_initial_key(int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::vector<StoredKey> live, load_published(now));
  for (jose::JwsAlg alg : jose::kAccessTokenAlgs) {
    const bool has_key =
        std::any_of(live.begin(), live.end(), [&](const StoredKey& k) { return k.alg == alg; });
    if (has_key) continue;
    PORTCULLIS_ASSIGN_OR_RETURN(StoredKey key, new_key(alg, now, now));
    PORTCULLIS_RETURN_IF_ERROR(insert(key));
    log::info("created the first signing key",
              {{"kid", key.id}, {"alg", std::string(jose::alg_name(alg))}});
  }
  return Status::ok();
}

Result<std::vector<std::string>> KeyStore::rotate(int64_t now, std::span<const jose::JwsAlg> algs) {
  int64_t activates_at = now + config_.key_prepublish_seconds;
  int64_t expires_at = activates_at + retired_key_grace_seconds(config_);
  // RSA generation takes tens of milliseconds: do it before taking any row lock.
  std::vector<StoredKey> fresh;
  for (jose::JwsAlg alg : algs) {
    PORTCULLIS_ASSIGN_OR_RETURN(StoredKey key, new_key(alg, now, activates_at));
    fresh.push_back(std::move(key));
  }
  PORTCULLIS_RETURN_IF_ERROR(db_.transaction([&]() -> Status {
    for (const StoredKey& key : fresh) {
      PORTCULLIS_RETURN_IF_ERROR(insert(key));
      // Every other key of this algorithm still in service stops signing when the new one
      // starts.
      PORTCULLIS_RETURN_IF_ERROR(
          db_.execute("UPDATE signing_keys SET retires_at = ?, expires_at = ? "
                      "WHERE algorithm = ? AND id <> ? AND (retires_at IS NULL OR retires_at > ?)",
                      {activates_at, expires_at, std::string(jose::alg_name(key.alg)), key.id,
                       activates_at})
              .status());
    }
    // Keys expired for a day are of no use to anyone; keep the table small.
    return db_
        .execute("DELETE FROM signing_keys WHERE expires_at IS NOT NULL AND expires_at < ?",
                 {now - 86400})
        .status();
  }));
  std::vector<std::string> ids;
  for (const StoredKey& key : fresh) {
    log::info("rotated signing key", {{"kid", key.id},
                                      {"alg", std::string(jose::alg_name(key.alg))},
                                      {"activates_at", static_cast<long long>(activates_at)}});
    ids.push_back(key.id);
  }
  return ids;
}

Result<std::vector<StoredKey>> KeyStore::load_published(int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(kSelectPublished, {now}));
  std::vector<StoredKey> out;
  out.reserve(rows.size());
  for (const store::Row& r : rows) {
    StoredKey k;
    k.id = r.str(0);
    k.private_key_sealed = r.str(1);
    k.public_jwk = r.str(2);
    k.created_at = r.i64(3);
    k.activates_at = r.i64(4);
    if (!r.is_null(5)) k.retires_at = r.i64(5);
    if (!r.is_null(6)) k.expires_at = r.i64(6);
    // A key of an algorithm this build does not know is skipped rather than misused.
    std::optional<jose::JwsAlg> alg = jose::alg_from_name(r.str(7));
    if (!alg) continue;
    k.alg = *alg;
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace portcullis::keys
