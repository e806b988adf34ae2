// The metadata document cache every worker and node shares (table cimd_documents). Only
// documents that passed validation are stored, with the expiry freshness.h computed; fetch
// failures and invalid documents are never written, so the next sign-in fetches again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::cimd {

// The stored document for `url` when it is still fresh at `now` (expires_at > now).
Result<std::optional<std::string>> load_fresh_document(store::Db& db, std::string_view url,
                                                       int64_t now);

// Stores (or replaces) the document for `url`.
Status store_document(store::Db& db, std::string_view url, std::string_view document,
                      int64_t fetched_at, int64_t expires_at);

// Deletes documents that expired more than a day before `now` (for a periodic task): a stale
// row is never served, only kept so a busy client's next fetch updates rather than inserts.
Status prune_documents(store::Db& db, int64_t now);

}  // namespace portcullis::cimd
