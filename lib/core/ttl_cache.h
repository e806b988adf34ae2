// The memory a worker keeps of values it would otherwise look up on every request (the clients
// and resources of the refresh grant and the code exchange, lib/clients): each entry for a fixed
// number of seconds, at most a fixed number of entries. Not thread-safe: workers are
// single-threaded, and each process has its own.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

namespace portcullis {

template <typename T>
class TtlCache {
 public:
  TtlCache(int64_t ttl_seconds, size_t max_entries)
      : ttl_seconds_(ttl_seconds), max_entries_(max_entries) {}

  // nullptr when absent or older than the ttl.
  const T* find(const std::string& key, int64_t now) const {
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.expires_at <= now) return nullptr;
    return &it->second.value;
  }
  void put(const std::string& key, T value, int64_t now) {
    // Many keys at once is an unusual load; starting over keeps memory bounded simply.
    if (entries_.size() >= max_entries_) entries_.clear();
    entries_[key] = Entry{std::move(value), now + ttl_seconds_};
  }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    T value;
    int64_t expires_at = 0;
  };
  int64_t ttl_seconds_;
  size_t max_entries_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace portcullis
