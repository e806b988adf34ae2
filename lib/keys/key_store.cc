#include "keys/key_store.h"

#include "core/ids.h"
#include "crypto/rsa.h"
#include "format/json.h"
#include "jose/jwk.h"
#include "log/log.h"

namespace portcullis::keys {
namespace {

constexpr int64_t kClockSkewSeconds = 60;
constexpr const char* kSelectPublished =
    "SELECT id, private_key_sealed, public_jwk, created_at, activates_at, retires_at, expires_at "
    "FROM signing_keys WHERE expires_at IS NULL OR expires_at > ? ORDER BY activates_at, id";

}  // namespace

int64_t retired_key_grace_seconds(const config::Config& config) {
  return config.max_token_lifetime_seconds + kClockSkewSeconds;
}

Result<StoredKey> KeyStore::new_key(int64_t now, int64_t activates_at) {
  PORTCULLIS_ASSIGN_OR_RETURN(crypto::RsaPrivateKey key, crypto::RsaPrivateKey::generate(2048));
  StoredKey k;
  k.id = new_id("key_");
  PORTCULLIS_ASSIGN_OR_RETURN(std::string der, key.to_pkcs8_der());
  PORTCULLIS_ASSIGN_OR_RETURN(k.private_key_sealed, master_key_.seal(der, k.id));
  k.public_jwk = json::write(jose::public_jwk(key.public_key(), k.id));
  k.created_at = now;
  k.activates_at = activates_at;
  return k;
}

Status KeyStore::insert(const StoredKey& k) {
  return db_
      .execute(
          "INSERT INTO signing_keys (id, algorithm, private_key_sealed, public_jwk, "
          "created_at, activates_at) VALUES (?, 'RS256', ?, ?, ?, ?)",
          {k.id, k.private_key_sealed, k.public_jwk, k.created_at, k.activates_at})
      .status();
}

Status KeyStore::ensure_initial_key(int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::vector<StoredKey> live, load_published(now));
  if (!live.empty()) return Status::ok();
  PORTCULLIS_ASSIGN_OR_RETURN(StoredKey key, new_key(now, now));
  PORTCULLIS_RETURN_IF_ERROR(insert(key));
  log::info("created the first signing key", {{"kid", key.id}});
  return Status::ok();
}

Result<std::string> KeyStore::rotate(int64_t now) {
  int64_t activates_at = now + config_.key_prepublish_seconds;
  int64_t expires_at = activates_at + retired_key_grace_seconds(config_);
  // RSA generation takes tens of milliseconds: do it before taking any row lock.
  PORTCULLIS_ASSIGN_OR_RETURN(StoredKey key, new_key(now, activates_at));
  PORTCULLIS_RETURN_IF_ERROR(db_.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(insert(key));
    // Every other key still in service stops signing when the new one starts.
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("UPDATE signing_keys SET retires_at = ?, expires_at = ? "
                    "WHERE id <> ? AND (retires_at IS NULL OR retires_at > ?)",
                    {activates_at, expires_at, key.id, activates_at})
            .status());
    // Keys expired for a day are of no use to anyone; keep the table small.
    return db_
        .execute("DELETE FROM signing_keys WHERE expires_at IS NOT NULL AND expires_at < ?",
                 {now - 86400})
        .status();
  }));
  log::info("rotated signing key",
            {{"kid", key.id}, {"activates_at", static_cast<long long>(activates_at)}});
  return key.id;
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
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace portcullis::keys
