#include "clients/client_cache.h"

namespace portcullis::oauth {

ClientCache& ClientCache::of_this_worker() {
  static ClientCache cache;
  return cache;
}

const AuthenticatableClient* ClientCache::find(const std::string& client_id, int64_t now) const {
  auto it = entries_.find(client_id);
  if (it == entries_.end() || it->second.expires_at <= now) return nullptr;
  return &it->second.client;
}

void ClientCache::put(const AuthenticatableClient& client, int64_t now) {
  // Many clients at once is an unusual load; starting over keeps memory bounded simply.
  if (entries_.size() >= kMaxEntries) entries_.clear();
  entries_[client.info.client_id] = Entry{client, now + kTtlSeconds};
}

}  // namespace portcullis::oauth
