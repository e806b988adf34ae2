#include "validation/token_cache.h"

namespace portcullis::validation {

std::shared_ptr<const AccessClaims> TokenCache::find(std::string_view token, int64_t now) {
  auto it = entries_.find(token);
  if (it == entries_.end()) return nullptr;
  // The same rule verify_token applied: valid while now < exp + leeway.
  if (now >= it->second->exp + leeway_seconds_) {
    entries_.erase(it);
    return nullptr;
  }
  return it->second;
}

void TokenCache::put(std::string_view token, std::shared_ptr<const AccessClaims> claims) {
  if (!claims) return;
  if (entries_.size() >= max_entries_) entries_.clear();
  entries_.insert_or_assign(std::string(token), std::move(claims));
}

}  // namespace portcullis::validation
