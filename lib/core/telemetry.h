// Process telemetry for /metrics (lib/metrics renders it, docs/operations.md "Metrics"): a
// fixed block of lock-free counters in memory shared by a pool's master and every worker it
// forks, one block per pool and node, kept in a file (<metrics dir>/<pool>.metrics) that the
// /metrics endpoint maps read-only and sums. Counting is one relaxed atomic add, and a no-op
// in a process that attached no block (the CLI, unit tests).
//
// Hooks for code that is not written yet use the same calls: add an enumerator before kCount
// (and its name in lib/metrics/render.cc), bump kLayoutVersion, and count or set it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::telemetry {

enum class Counter : uint32_t {
  // Database (lib/store/db.cc).
  kDbConnects,         // connections opened
  kDbConnectFailures,  // connection attempts that failed
  kDbConnectMicros,    // time spent connecting (the wait before a worker can use the database)
  kDbConnectionsLost,  // connections found dead (server restart, node down, killed)
  kDbConflicts,        // deadlocks and Galera certification failures (error 1213)
  kDbConflictRetries,  // ...of which run again after a backoff
  // Tokens (lib/oauth/token_grants.cc, handlers/oauth/token_endpoint.cc).
  kTokensIssuedCode,               // authorization_code grant
  kTokensIssuedClientCredentials,  // client_credentials grant (management API)
  kTokensRefreshed,                // refresh_token grant
  kTokensRefused,                  // token endpoint answers 4xx
  kRefreshReuseDetected,           // a rotated-out refresh token came back: grant revoked
  kCodeReplayDetected,             // an authorization code was used twice: grant revoked
  // Worker pools (lib/runtime/master.cc).
  kWorkerStarts,
  kWorkerDeaths,  // workers that exited without being asked to
  // FastCGI connections (lib/runtime/fastcgi_loop.cc): fewer than requests when nginx keeps
  // connections alive; idle closes are kept-alive connections the worker dropped itself after
  // PORTCULLIS_FASTCGI_KEEPALIVE_IDLE_MS (0 when nginx's keepalive_timeout is the shorter).
  kFastcgiConnections,
  kFastcgiIdleCloses,
  // SCIM (handlers/scim): operations answered 2xx.
  kScimCreates,
  kScimReplaces,
  kScimPatches,
  kScimDeletes,
  kScimReads,
  // Webhooks: deliveries.
  kWebhookDeliveries,
  kWebhookFailures,
  kCount
};

enum class Gauge : uint32_t {
  kWebhookQueueDepth,  // events waiting for delivery (set by the delivering process)
  kCount
};

// Request duration buckets, in microseconds (the last bucket is +Inf).
inline constexpr uint64_t kLatencyBucketsMicros[] = {
    1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000};
inline constexpr size_t kLatencyBuckets = sizeof(kLatencyBucketsMicros) / sizeof(uint64_t) + 1;

inline constexpr uint64_t kMagic = 0x50434d4554524943ULL;  // "PCMETRIC"
inline constexpr uint32_t kLayoutVersion = 2;

// The shared block. Only lock-free atomics (checked below), so processes can share it.
struct Block {
  uint64_t magic;
  uint32_t version;
  uint32_t size;
  char pool[32];  // NUL-terminated pool name: wellknown, oauth, api, scim, demo-mcp
  std::atomic<uint64_t> counters[static_cast<size_t>(Counter::kCount)];
  std::atomic<int64_t> gauges[static_cast<size_t>(Gauge::kCount)];
  std::atomic<uint64_t> requests_by_class[6];  // index = status / 100 (0 = anything else)
  std::atomic<uint64_t> latency_buckets[kLatencyBuckets];  // not cumulative
  std::atomic<uint64_t> latency_sum_micros;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<int64_t>::is_always_lock_free);

// Creates (or replaces) DIR/POOL.metrics, zeroed, and attaches this process to it; children
// forked afterwards share it. The file is written under a temporary name and renamed, so a
// process still mapping the previous file (an old master draining) never sees it shrink.
Status open_shared(const std::string& dir, std::string_view pool);
// The attached block, or nullptr.
Block* attached();

void count(Counter c, uint64_t n = 1);
void add_micros(Counter c, std::chrono::steady_clock::time_point since);
void set_gauge(Gauge g, int64_t value);
// One answered request: its status and how long it took.
void observe_request(int status, uint64_t micros);

}  // namespace portcullis::telemetry
