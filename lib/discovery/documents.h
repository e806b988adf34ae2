// A resource's metadata documents kept in the worker's memory (issue 16): rendered once, served
// without touching the database, and checked against the database at most once per
// `max_age_ms` (1 s by default). So a change to a resource shows in every worker within that
// bound (and through each node's nginx, which keeps a copy for up to 2 s, within 3 s:
// nginx/portcullis/document-cache.conf); each document carries an ETag (http/document.h), the
// same in every worker.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "config/config.h"
#include "core/status.h"
#include "http/document.h"
#include "store/db.h"

namespace portcullis::discovery {

class ResourceDocuments {
 public:
  struct Entry {
    http::Document oauth;   // RFC 8414 metadata
    http::Document openid;  // the OpenID Discovery form
    int64_t checked_ms = 0;
  };

  explicit ResourceDocuments(int64_t max_age_ms = 1000) : max_age_ms_(max_age_ms) {}

  // The documents of resource `id` as of at most max_age_ms ago. NotFound for an unknown id;
  // while the database is unreachable, what was rendered last (or Unavailable).
  Result<const Entry*> get(store::Db& db, const config::Config& config, const std::string& id,
                           int64_t now_ms);

 private:
  // More resources than this in one worker's memory: it starts over (ids are not trusted).
  static constexpr size_t kMaxEntries = 10000;
  int64_t max_age_ms_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace portcullis::discovery
