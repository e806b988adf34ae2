#include "clients/resource_cache.h"

namespace portcullis::oauth {

ResourceCache& ResourceCache::of_this_worker() {
  static ResourceCache cache;
  return cache;
}

const Resource* ResourceCache::find(const std::string& resource_id, int64_t now) const {
  auto it = entries_.find(resource_id);
  if (it == entries_.end() || it->second.expires_at <= now) return nullptr;
  return &it->second.resource;
}

void ResourceCache::put(const Resource& resource, int64_t now) {
  // Many resources at once is an unusual load; starting over keeps memory bounded simply.
  if (entries_.size() >= kMaxEntries) entries_.clear();
  entries_[resource.id] = Entry{resource, now + kTtlSeconds};
}

Result<Resource> ResourceCache::get(store::Db& db, const std::string& resource_id, int64_t now) {
  if (const Resource* cached = find(resource_id, now)) return *cached;
  PORTCULLIS_ASSIGN_OR_RETURN(Resource loaded, ResourceStore(db).get(resource_id));
  put(loaded, now);
  return loaded;
}

}  // namespace portcullis::oauth
