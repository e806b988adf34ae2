// Exact row counts of large listings (total_size, contract §8), kept as sharded counter rows in
// table listing_counts instead of a COUNT(*) on every page: counting the index entries of one
// organization with a million members takes hundreds of milliseconds, summing 16 rows takes
// none (measurements in docs/listing.md).
//
// The count is exact because every insert and delete of a counted row changes it in the same
// transaction; a code path that adds or removes such a row without add_to_count() breaks
// total_size for good. The scopes in use:
//   - kEnvironmentUsers: every row of `users` (identity::UserStore is the only writer);
//   - an organization id: that organization's rows of `memberships`
//     (organizations::MembershipStore is the only writer).
// The shard is picked from the counted row's id, so a row's insert and its delete hit the same
// shard row, and concurrent writers of one scope mostly touch different rows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::paging {

inline constexpr int kCountShards = 16;
inline constexpr std::string_view kEnvironmentUsers = "users";

// Adds `delta` to `scope`'s count. Call inside the transaction that inserts (delta +1) or
// deletes (-1) the counted row whose id is `row_id`.
Status add_to_count(store::Db& db, std::string_view scope, std::string_view row_id, int64_t delta);

// The count of `scope`: 0 when nothing was ever counted there.
Result<int64_t> read_count(store::Db& db, std::string_view scope);

// Forgets `scope` (its organization is being deleted with all its memberships).
Status drop_count(store::Db& db, std::string_view scope);

}  // namespace portcullis::paging
