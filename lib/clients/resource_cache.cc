#include "clients/resource_cache.h"

namespace portcullis::oauth {

ResourceCache& ResourceCache::of_this_worker() {
  static ResourceCache cache;
  return cache;
}

Result<Resource> ResourceCache::get(store::Db& db, const std::string& resource_id, int64_t now) {
  if (const Resource* cached = entries_.find(resource_id, now)) return *cached;
  PORTCULLIS_ASSIGN_OR_RETURN(Resource loaded, ResourceStore(db).get(resource_id));
  entries_.put(resource_id, loaded, now);
  return loaded;
}

}  // namespace portcullis::oauth
