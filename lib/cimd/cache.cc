#include "cimd/cache.h"

#include "crypto/hash.h"

namespace portcullis::cimd {

// Rows are keyed by the URL's SHA-256: URLs are up to 2,000 bytes, too long for an index.
Result<std::optional<std::string>> load_fresh_document(store::Db& db, std::string_view url,
                                                       int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db.query("SELECT url, document FROM cimd_documents WHERE url_key = ? AND expires_at > ?",
               {crypto::sha256(url), now}));
  // The url column guards against the (theoretical) hash collision.
  if (rows.empty() || rows[0].str(0) != url) return std::optional<std::string>();
  return std::optional<std::string>(rows[0].str(1));
}

Status store_document(store::Db& db, std::string_view url, std::string_view document,
                      int64_t fetched_at, int64_t expires_at) {
  return db
      .execute(
          "INSERT INTO cimd_documents (url_key, url, document, fetched_at, expires_at) "
          "VALUES (?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE url = VALUES(url), "
          "document = VALUES(document), fetched_at = VALUES(fetched_at), "
          "expires_at = VALUES(expires_at)",
          {crypto::sha256(url), std::string(url), std::string(document), fetched_at, expires_at})
      .status();
}

Status prune_documents(store::Db& db, int64_t now) {
  return db.execute("DELETE FROM cimd_documents WHERE expires_at < ?", {now - 86400}).status();
}

}  // namespace portcullis::cimd
