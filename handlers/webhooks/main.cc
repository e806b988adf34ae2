// portcullis-webhooks: the webhook delivery process (lib/webhooks/delivery.h, docs/events.md),
// and the background process of work no request may do itself. Each round first fans out the
// events the oauth and sso workers wrote with their changes and marked in event_outbox
// (events::EventStore::fan_out: their deliveries and their types' counts), then delivers. It
// also runs a slice of
// a queued SCIM group → role re-evaluation (scim::run_role_job, docs/scim.md §6) and, at most
// once a second while there is none to do, a hop of a growing directory's list checkpoints
// (scim::run_checkpoint_job, docs/scim.md §7).
// Runs rounds of claim → post → record until SIGTERM/SIGINT, sleeping PORTCULLIS_WEBHOOK_POLL_MS
// when there is nothing due. Any number may run, on any number of nodes: they share the work
// through SELECT … FOR UPDATE SKIP LOCKED. A stop finishes the round in progress; a crash leaves
// its claimed deliveries due again after PORTCULLIS_WEBHOOK_LEASE_SECONDS.
//
//   portcullis-webhooks [--config FILE]
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "config/config.h"
#include "crypto/aead.h"
#include "events/event_store.h"
#include "events/recorder.h"
#include "log/log.h"
#include "scim/scim_store.h"
#include "store/db.h"
#include "webhooks/delivery.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;

// Marked events fanned out per transaction, and transactions per round at most.
constexpr int64_t kFanOutBatch = 500;
constexpr int kFanOutBatchesPerRound = 8;

void on_signal(int) {
  g_stop = 1;
}

// Sleeps up to `ms`, waking early on a stop.
void nap(int64_t ms) {
  for (int64_t left = ms; left > 0 && !g_stop; left -= 50) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(left, 50)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace portcullis;
  std::string config_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
      config_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: portcullis-webhooks [--config FILE]\n");
      return 2;
    }
  }
  auto loaded = config::load(config_path);
  if (!loaded) {
    std::fprintf(stderr, "portcullis-webhooks: %s\n", loaded.status().message().c_str());
    return 1;
  }
  const config::Config config = std::move(loaded).value();
  log::init("webhooks", log::parse_level(config.log_level, log::Level::kInfo));
  auto key = crypto::MasterKey::load_file(config.master_key_file);
  if (!key) {
    log::error("cannot load the master key", {{"error", key.status().message()}});
    return 1;
  }
  store::init_driver();
  store::Db db(config.db);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  webhooks::Deliverer deliverer(db, *key, config, webhooks::delivery_options(config));
  events::Recorder recorder;
  log::info("webhook delivery started", {{"batch", config.webhooks.batch}});
  int64_t backoff_ms = config.webhooks.poll_ms;
  auto next_checkpoint_job = std::chrono::steady_clock::now();
  while (!g_stop) {
    // Several processes share the marks through SKIP LOCKED; a full batch means more wait, so
    // the round does not nap. Bounded per round, so deliveries keep flowing under a burst.
    bool more_marked = false;
    for (int batches = 0; batches < kFanOutBatchesPerRound && !g_stop; ++batches) {
      auto fanned = events::EventStore(db).fan_out(kFanOutBatch);
      if (!fanned) {
        log::warn("event fan-out failed", {{"error", fanned.status().to_string()}});
        break;
      }
      more_marked = *fanned == kFanOutBatch;
      if (!more_marked) break;
    }
    auto round = deliverer.run_once(recorder);
    auto roles = scim::run_role_job(db);
    if (!roles)
      log::warn("SCIM role re-evaluation slice failed", {{"error", roles.status().to_string()}});
    bool scim_pending = roles && *roles;
    if (std::chrono::steady_clock::now() >= next_checkpoint_job) {
      auto hop = scim::run_checkpoint_job(db, config.scim_checkpoint_every);
      if (!hop) log::warn("SCIM checkpoint hop failed", {{"error", hop.status().to_string()}});
      const bool more = hop && *hop;
      scim_pending = scim_pending || more;
      next_checkpoint_job =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(more ? 0 : 1000);
    }
    if (!recorder.empty()) {
      if (Status st = recorder.flush(db); !st.is_ok()) {
        log::warn("events not yet written", {{"error", st.to_string()}});
      }
    }
    if (!round) {
      // The store is unreachable or busy: wait, longer each time, up to 5 s.
      log::warn("webhook round failed", {{"error", round.status().to_string()}});
      nap(backoff_ms);
      backoff_ms = std::min<int64_t>(backoff_ms * 2, 5000);
      continue;
    }
    backoff_ms = config.webhooks.poll_ms;
    if (*round == 0 && !scim_pending && !more_marked) nap(config.webhooks.poll_ms);
  }
  if (!recorder.empty()) (void)recorder.flush(db);
  log::info("webhook delivery stopped");
  return 0;
}
