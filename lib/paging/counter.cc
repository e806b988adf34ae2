#include "paging/counter.h"

namespace portcullis::paging {
namespace {

// FNV-1a: stable across processes and nodes, unlike std::hash.
int64_t shard_of(std::string_view row_id) {
  uint32_t h = 2166136261u;
  for (char c : row_id) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return static_cast<int64_t>(h % kCountShards);
}

}  // namespace

Status add_to_count(store::Db& db, std::string_view scope, std::string_view row_id, int64_t delta) {
  return db
      .execute(
          "INSERT INTO listing_counts (scope, shard, n) VALUES (?, ?, ?) "
          "ON DUPLICATE KEY UPDATE n = n + VALUES(n)",
          {std::string(scope), shard_of(row_id), delta})
      .status();
}

Result<int64_t> read_count(store::Db& db, std::string_view scope) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows, db.query("SELECT COALESCE(SUM(n), 0) FROM listing_counts WHERE scope = ?",
                                 {std::string(scope)}));
  return rows.empty() ? 0 : rows[0].i64(0);
}

Status drop_count(store::Db& db, std::string_view scope) {
  return db.execute("DELETE FROM listing_counts WHERE scope = ?", {std::string(scope)}).status();
}

}  // namespace portcullis::paging
