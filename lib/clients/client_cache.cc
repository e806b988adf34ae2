#include "clients/client_cache.h"

namespace portcullis::oauth {

ClientCache& ClientCache::of_this_worker() {
  static ClientCache cache;
  return cache;
}

const AuthenticatableClient* ClientCache::find(const std::string& client_id, int64_t now) const {
  return entries_.find(client_id, now);
}

void ClientCache::put(const AuthenticatableClient& client, int64_t now) {
  entries_.put(client.info.client_id, client, now);
}

}  // namespace portcullis::oauth
