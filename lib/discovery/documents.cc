#include "discovery/documents.h"

#include "clients/resources.h"
#include "discovery/metadata.h"
#include "format/json.h"

namespace portcullis::discovery {

Result<const ResourceDocuments::Entry*> ResourceDocuments::get(store::Db& db,
                                                               const config::Config& config,
                                                               const std::string& id,
                                                               int64_t now_ms) {
  auto it = entries_.find(id);
  if (it != entries_.end() && now_ms - it->second.checked_ms < max_age_ms_) return &it->second;
  auto loaded = oauth::ResourceStore(db).get(id);
  if (!loaded) {
    if (loaded.status().code() != Code::kNotFound && it != entries_.end()) {
      return &it->second;  // the database is away: serve what was rendered last
    }
    if (it != entries_.end()) entries_.erase(it);
    return loaded.status();
  }
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxEntries) entries_.clear();
    it = entries_.emplace(id, Entry{}).first;
  }
  Entry& entry = it->second;
  std::string oauth = json::write(resource_metadata(config, *loaded));
  if (oauth != entry.oauth.body)
    entry.oauth = http::make_document(std::move(oauth), "application/json");
  std::string openid = json::write(resource_openid_configuration(config, *loaded));
  if (openid != entry.openid.body) {
    entry.openid = http::make_document(std::move(openid), "application/json");
  }
  entry.checked_ms = now_ms;
  return &entry;
}

}  // namespace portcullis::discovery
