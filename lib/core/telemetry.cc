#include "core/telemetry.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace portcullis::telemetry {
namespace {

Block* g_block = nullptr;

size_t index(Counter c) {
  return static_cast<size_t>(c);
}

}  // namespace

Status open_shared(const std::string& dir, std::string_view pool) {
  if (dir.empty()) return Status::ok();
  if (pool.size() >= sizeof(Block::pool)) return Status::invalid_argument("pool name too long");
  if (::mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST) {
    return Status::internal("cannot create the metrics directory " + dir + ": " +
                            std::strerror(errno));
  }
  std::string path = dir + "/" + std::string(pool) + ".metrics";
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return Status::internal("cannot create " + tmp + ": " + std::strerror(errno));
  if (::ftruncate(fd, sizeof(Block)) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return Status::internal("cannot size " + tmp + ": " + std::strerror(err));
  }
  void* mem = ::mmap(nullptr, sizeof(Block), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mem == MAP_FAILED) {
    ::unlink(tmp.c_str());
    return Status::internal("cannot map " + tmp + ": " + std::strerror(errno));
  }
  // The file is zero-filled by ftruncate; zero atomics are valid atomics holding 0.
  Block* block = new (mem) Block{};
  std::memcpy(block->pool, pool.data(), pool.size());
  block->version = kLayoutVersion;
  block->size = sizeof(Block);
  std::atomic_thread_fence(std::memory_order_release);
  block->magic = kMagic;
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::munmap(mem, sizeof(Block));
    ::unlink(tmp.c_str());
    return Status::internal("cannot rename " + tmp + ": " + std::strerror(err));
  }
  if (g_block) ::munmap(g_block, sizeof(Block));
  g_block = block;
  return Status::ok();
}

Block* attached() {
  return g_block;
}

void count(Counter c, uint64_t n) {
  if (g_block) g_block->counters[index(c)].fetch_add(n, std::memory_order_relaxed);
}

void add_micros(Counter c, std::chrono::steady_clock::time_point since) {
  if (!g_block) return;
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::steady_clock::now() - since)
                    .count();
  count(c, static_cast<uint64_t>(micros < 0 ? 0 : micros));
}

void set_gauge(Gauge g, int64_t value) {
  if (g_block) g_block->gauges[static_cast<size_t>(g)].store(value, std::memory_order_relaxed);
}

void observe_request(int status, uint64_t micros) {
  if (!g_block) return;
  int cls = status / 100;
  g_block->requests_by_class[cls >= 1 && cls <= 5 ? cls : 0].fetch_add(1,
                                                                       std::memory_order_relaxed);
  size_t bucket = 0;
  while (bucket + 1 < kLatencyBuckets && micros > kLatencyBucketsMicros[bucket]) ++bucket;
  g_block->latency_buckets[bucket].fetch_add(1, std::memory_order_relaxed);
  g_block->latency_sum_micros.fetch_add(micros, std::memory_order_relaxed);
}

}  // namespace portcullis::telemetry
