#include "metrics/render.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <vector>

#include "core/telemetry.h"

namespace portcullis::metrics {
namespace {

using telemetry::Block;
using telemetry::Counter;

struct CounterInfo {
  Counter counter;
  const char* name;
  const char* label;  // extra label, "key=\"value\"", or ""
  const char* help;
  bool micros_to_seconds = false;
};

// Every telemetry::Counter, in the order of the enum; a new one needs its line here.
constexpr CounterInfo kCounters[] = {
    {Counter::kDbConnects, "portcullis_db_connections_opened_total", "",
     "Database connections opened by the workers."},
    {Counter::kDbConnectFailures, "portcullis_db_connect_failures_total", "",
     "Database connection attempts that failed."},
    {Counter::kDbConnectMicros, "portcullis_db_connect_seconds_total", "",
     "Time the workers spent waiting to connect to the database.", true},
    {Counter::kDbConnectionsLost, "portcullis_db_connections_lost_total", "",
     "Database connections found dead (server restart, node down)."},
    {Counter::kDbConflicts, "portcullis_db_conflicts_total", "",
     "Deadlocks and Galera certification failures (error 1213)."},
    {Counter::kDbConflictRetries, "portcullis_db_conflict_retries_total", "",
     "Statements and transactions run again after a conflict."},
    {Counter::kTokensIssuedCode, "portcullis_tokens_issued_total",
     "grant_type=\"authorization_code\"", "Access tokens issued, by grant type."},
    {Counter::kTokensIssuedClientCredentials, "portcullis_tokens_issued_total",
     "grant_type=\"client_credentials\"", "Access tokens issued, by grant type."},
    {Counter::kTokensRefreshed, "portcullis_tokens_refreshed_total", "",
     "Refresh token rotations (refresh_token grant)."},
    {Counter::kTokensRefused, "portcullis_tokens_refused_total", "",
     "Token endpoint requests answered with an error."},
    {Counter::kRefreshReuseDetected, "portcullis_token_reuse_detected_total",
     "kind=\"refresh_token\"", "Reused refresh tokens or authorization codes (grant revoked)."},
    {Counter::kCodeReplayDetected, "portcullis_token_reuse_detected_total",
     "kind=\"authorization_code\"",
     "Reused refresh tokens or authorization codes (grant revoked)."},
    {Counter::kWorkerStarts, "portcullis_worker_starts_total", "", "Workers forked."},
    {Counter::kWorkerDeaths, "portcullis_worker_deaths_total", "",
     "Workers that exited without being asked to."},
    {Counter::kFastcgiConnections, "portcullis_fastcgi_connections_total", "",
     "FastCGI connections accepted from nginx (fewer than requests when kept alive)."},
    {Counter::kFastcgiIdleCloses, "portcullis_fastcgi_idle_closes_total", "",
     "Kept-alive FastCGI connections a worker closed after its idle timeout."},
    {Counter::kScimCreates, "portcullis_scim_operations_total", "op=\"create\"",
     "SCIM operations answered 2xx, by operation."},
    {Counter::kScimReplaces, "portcullis_scim_operations_total", "op=\"replace\"",
     "SCIM operations answered 2xx, by operation."},
    {Counter::kScimPatches, "portcullis_scim_operations_total", "op=\"patch\"",
     "SCIM operations answered 2xx, by operation."},
    {Counter::kScimDeletes, "portcullis_scim_operations_total", "op=\"delete\"",
     "SCIM operations answered 2xx, by operation."},
    {Counter::kScimReads, "portcullis_scim_operations_total", "op=\"read\"",
     "SCIM operations answered 2xx, by operation."},
    {Counter::kWebhookDeliveries, "portcullis_webhook_deliveries_total", "",
     "Webhook deliveries acknowledged by the receiver."},
    {Counter::kWebhookFailures, "portcullis_webhook_delivery_failures_total", "",
     "Webhook delivery attempts that failed."},
};
static_assert(sizeof(kCounters) / sizeof(kCounters[0]) == static_cast<size_t>(Counter::kCount),
              "every telemetry::Counter needs a line in kCounters");

struct Family {
  std::string help;
  std::string type;
  std::vector<std::string> samples;
};

// Seconds from microseconds, exactly (no binary-fraction noise such as 0.050000000000000003).
std::string seconds(uint64_t micros) {
  std::string frac = std::to_string(micros % 1000000);
  frac.insert(0, 6 - frac.size(), '0');
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return std::to_string(micros / 1000000) + (frac.empty() ? "" : "." + frac);
}

std::string labels(const std::string& pool, std::string_view extra) {
  std::string out = "{pool=\"" + pool + "\"";
  if (!extra.empty()) out += "," + std::string(extra);
  return out + "}";
}

// A pool name from a file: printable, no quote or backslash (it goes into a label value).
std::string pool_name(const Block& b) {
  std::string out;
  for (char c : b.pool) {
    if (c == '\0') break;
    out.push_back((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ? c
                                                                                           : '_');
  }
  return out;
}

void add_block(const Block& b, std::map<std::string, Family>& out) {
  std::string pool = pool_name(b);
  auto family = [&](const std::string& name, const char* type, const char* help) -> Family& {
    Family& f = out[name];
    if (f.type.empty()) {
      f.type = type;
      f.help = help;
    }
    return f;
  };
  Family& requests = family("portcullis_http_requests_total", "counter",
                            "Requests answered by the pool, by status class.");
  static constexpr const char* kClasses[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
  for (size_t i = 0; i < 6; ++i) {
    uint64_t v = b.requests_by_class[i].load(std::memory_order_relaxed);
    if (i == 0 && v == 0) continue;
    requests.samples.push_back("portcullis_http_requests_total" +
                               labels(pool, std::string("code=\"") + kClasses[i] + "\"") + " " +
                               std::to_string(v));
  }
  Family& latency = family("portcullis_http_request_duration_seconds", "histogram",
                           "Time from the request's arrival at the worker to its response.");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < telemetry::kLatencyBuckets; ++i) {
    cumulative += b.latency_buckets[i].load(std::memory_order_relaxed);
    std::string le =
        i + 1 < telemetry::kLatencyBuckets ? seconds(telemetry::kLatencyBucketsMicros[i]) : "+Inf";
    latency.samples.push_back("portcullis_http_request_duration_seconds_bucket" +
                              labels(pool, "le=\"" + le + "\"") + " " + std::to_string(cumulative));
  }
  latency.samples.push_back("portcullis_http_request_duration_seconds_sum" + labels(pool, "") +
                            " " + seconds(b.latency_sum_micros.load(std::memory_order_relaxed)));
  latency.samples.push_back("portcullis_http_request_duration_seconds_count" + labels(pool, "") +
                            " " + std::to_string(cumulative));

  for (const CounterInfo& c : kCounters) {
    uint64_t v = b.counters[static_cast<size_t>(c.counter)].load(std::memory_order_relaxed);
    Family& f = family(c.name, "counter", c.help);
    f.samples.push_back(c.name + labels(pool, c.label) + " " +
                        (c.micros_to_seconds ? seconds(v) : std::to_string(v)));
  }
  Family& depth = family("portcullis_webhook_queue_depth", "gauge",
                         "Events waiting for webhook delivery (set by the delivering pool).");
  depth.samples.push_back(
      "portcullis_webhook_queue_depth" + labels(pool, "") + " " +
      std::to_string(b.gauges[static_cast<size_t>(telemetry::Gauge::kWebhookQueueDepth)].load(
          std::memory_order_relaxed)));
}

// Maps one file read-only and adds it; false when it is not a complete current block.
bool read_file(const std::string& path, std::map<std::string, Family>& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < sizeof(Block)) {
    ::close(fd);
    return false;
  }
  void* mem = ::mmap(nullptr, sizeof(Block), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mem == MAP_FAILED) return false;
  const Block* b = static_cast<const Block*>(mem);
  bool ok = b->magic == telemetry::kMagic && b->version == telemetry::kLayoutVersion &&
            b->size == sizeof(Block);
  if (ok) add_block(*b, out);
  ::munmap(mem, sizeof(Block));
  return ok;
}

}  // namespace

std::string render_directory(const std::string& dir) {
  std::vector<std::string> files;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      constexpr std::string_view kSuffix = ".metrics";
      if (name.size() > kSuffix.size() &&
          name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
        files.push_back(dir + "/" + name);
      }
    }
    ::closedir(d);
  }
  std::sort(files.begin(), files.end());
  std::map<std::string, Family> families;
  int skipped = 0;
  for (const std::string& f : files) {
    if (!read_file(f, families)) ++skipped;
  }
  std::string out;
  for (const auto& [name, f] : families) {
    out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + f.type + "\n";
    for (const std::string& s : f.samples) out += s + "\n";
  }
  out +=
      "# HELP portcullis_metrics_files_skipped Metrics files that were not a complete block.\n"
      "# TYPE portcullis_metrics_files_skipped gauge\nportcullis_metrics_files_skipped " +
      std::to_string(skipped) + "\n";
  return out;
}

}  // namespace portcullis::metrics
