#include "webhooks/delivery.h"

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "core/ids.h"
#include "core/time.h"
#include "events/delivery_store.h"
#include "events/event_store.h"
#include "format/json.h"
#include "log/log.h"
#include "webhooks/signing.h"
#include "webhooks/webhook_store.h"

namespace portcullis::webhooks {
namespace {

constexpr size_t kExcerptBytes = 256;
// Endpoints posted to at once by one delivery process (each endpoint by one thread, in order).
constexpr size_t kParallelEndpoints = 16;

// Columns of a claimed delivery: the delivery, its endpoint, then the event (event_json's
// order).
constexpr const char* kClaimedColumns =
    "d.id, d.webhook_id, d.attempts, w.url, w.secret_sealed, w.previous_secret_sealed, "
    "w.previous_secret_expires_at > UTC_TIMESTAMP(6), w.enabled, "
    "TIMESTAMPDIFF(SECOND, w.failing_since, UTC_TIMESTAMP(6)), w.failing_since, "
    "e.id, e.type, e.occurred_at, e.organization_id, e.user_id, e.resource_id, e.client_id, "
    "e.ip, e.user_agent, e.data";
constexpr size_t kEventColumn = 10;

std::string excerpt(std::string_view text) {
  std::string out(text.substr(0, kExcerptBytes));
  // Keep it valid UTF-8 for the utf8mb4 column: drop a cut multi-byte sequence at the end.
  size_t i = out.size();
  while (i > 0 && (static_cast<unsigned char>(out[i - 1]) & 0xC0) == 0x80) --i;
  if (i > 0 && static_cast<unsigned char>(out[i - 1]) >= 0xC0) out.resize(i - 1);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') c = ' ';
  }
  return out;
}

// NULL when there was no response / nothing to say.
store::Value status_or_null(long status) {
  if (status == 0) return nullptr;
  return static_cast<int64_t>(status);
}
store::Value text_or_null(const std::string& text) {
  if (text.empty()) return nullptr;
  return text;
}

double jitter() {
  static std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.8, 1.2)(rng);
}

}  // namespace

std::string payload(const Json::Value& event) {
  Json::Value p(Json::objectValue);
  p["type"] = event["type"];
  p["timestamp"] = event["occurred_at"];
  p["data"] = event;
  return json::write(p);
}

int64_t retry_delay_ms(const std::vector<int64_t>& schedule, int attempts) {
  if (attempts < 1 || static_cast<size_t>(attempts) > schedule.size()) return -1;
  return static_cast<int64_t>(static_cast<double>(schedule[attempts - 1]) * 1000.0 * jitter());
}

Attempt post_message(outbound::Session& session, const std::string& url,
                     const std::string& message_id, const std::string& body,
                     const std::vector<std::string>& keys, int64_t timestamp,
                     const outbound::Options& options) {
  outbound::PostRequest post;
  post.body = body;
  post.headers = {{"webhook-id", message_id},
                  {"webhook-timestamp", std::to_string(timestamp)},
                  {"webhook-signature", signature_header(keys, message_id, timestamp, body)}};
  const auto started = std::chrono::steady_clock::now();
  auto response = session.post(url, post, options);
  Attempt a;
  a.latency_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - started)
                     .count();
  if (!response) {
    a.error = response.status().message();
    return a;
  }
  a.status = response->status;
  a.excerpt = excerpt(response->body);
  return a;
}

outbound::Options delivery_options(const config::Config& config) {
  outbound::Options o;
  o.ca_file = config.outbound_ca_file;
  o.allow_loopback_http = config.is_local();
  o.timeout = std::chrono::milliseconds(config.webhooks.timeout_ms);
  o.connect_timeout = std::min(o.timeout, std::chrono::milliseconds(5000));
  o.max_body_bytes = 4096;
  o.truncate_body = true;
  o.accept = "*/*";
  return o;
}

Deliverer::Deliverer(store::Db& db, const crypto::MasterKey& master_key,
                     const config::Config& config, outbound::Options options)
    : db_(db),
      master_key_(master_key),
      config_(config),
      options_(std::move(options)),
      sessions_(kParallelEndpoints) {}

Result<int> Deliverer::run_once(events::Recorder& recorder) {
  const std::string claim = new_id("clm_");
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  events::DeliveryStore deliveries(db_);
  // 1. Claim.
  PORTCULLIS_ASSIGN_OR_RETURN(std::vector<std::string> claimed_ids,
                              deliveries.claim(claim, config_.webhooks.lease_seconds,
                                               static_cast<int64_t>(config_.webhooks.batch)));
  if (claimed_ids.empty()) return 0;
  // Read by primary key (claim has no index): the rows this round claimed, unless another
  // round took them over since (their lease ended).
  store::Params params{claim};
  for (std::string& id : claimed_ids) params.emplace_back(std::move(id));
  const std::string list = store::in_list(params, params.size() - 1);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows claimed,
      db_.query(std::string("SELECT ") + kClaimedColumns +
                    " FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id "
                    "JOIN events e ON e.id = d.event_id WHERE d.claim = ? AND d.id IN (" +
                    list + ") ORDER BY d.webhook_id, e.occurred_at, e.id",
                params));
  if (claimed.empty()) return 0;
  const auto claimed_at = Clock::now();

  WebhookStore endpoints(db_, master_key_);
  // 2. Post. The claimed rows come ordered by endpoint, then event: each endpoint's run of rows
  // is one queue, posted in order by one thread; up to kParallelEndpoints endpoints at once.
  struct Item {
    const store::Row* row;
    std::string body;
    Attempt attempt;
    bool posted = false;  // false: held back because an earlier one of its endpoint failed
  };
  struct Queue {
    std::string webhook_id;
    std::vector<std::string> keys;
    std::string key_error;
    std::vector<Item> items;
  };
  std::vector<Queue> queues;
  std::vector<std::string> disabled_ids;  // deliveries of endpoints disabled since queued
  for (const store::Row& r : claimed) {
    if (!r.boolean(7)) {
      disabled_ids.push_back(r.str(0));
      continue;
    }
    if (queues.empty() || queues.back().webhook_id != r.str(1)) {
      Queue q;
      q.webhook_id = r.str(1);
      auto keys = endpoints.signing_keys(q.webhook_id, r.str(4), r.str(5), r.boolean(6));
      if (keys) {
        q.keys = std::move(*keys);
      } else {
        q.key_error = "the signing secret cannot be opened";
        log::error("webhook secret cannot be opened",
                   {{"webhook_id", q.webhook_id}, {"error", keys.status().message()}});
      }
      queues.push_back(std::move(q));
    }
    std::vector<std::optional<std::string>> cells;
    for (size_t i = kEventColumn; i < r.size(); ++i) cells.push_back(r.opt(i));
    queues.back().items.push_back(
        Item{&r, payload(events::event_json(store::Row(std::move(cells)))), {}, false});
  }
  const int64_t timestamp = unix_now();
  std::atomic<size_t> next_queue{0};
  auto post_queues = [&](outbound::Session& session) {
    for (size_t qi = next_queue++; qi < queues.size(); qi = next_queue++) {
      Queue& q = queues[qi];
      for (Item& item : q.items) {
        item.posted = true;
        if (!q.key_error.empty()) {
          item.attempt.error = q.key_error;
        } else {
          item.attempt = post_message(session, item.row->str(3), item.row->str(0), item.body,
                                      q.keys, timestamp, options_);
        }
        if (!item.attempt.ok()) break;  // the endpoint's later messages wait with this one
      }
    }
  };
  {
    std::vector<std::jthread> threads;
    const size_t n = std::min(queues.size(), kParallelEndpoints);
    for (size_t i = 1; i < n; ++i) threads.emplace_back(post_queues, std::ref(sessions_[i]));
    post_queues(sessions_[0]);
  }

  const auto posted_at = Clock::now();
  // 3. Record, in one transaction: every attempt, the delivered rows, the failed ones' next
  // attempt, the held ones released with their endpoint's wait, the endpoints' failure clocks.
  int attempted = 0;
  std::vector<events::Event> disabled_events;
  Status written = db_.transaction([&]() -> Status {
    attempted = 0;
    disabled_events.clear();
    PORTCULLIS_RETURN_IF_ERROR(deliveries.fail_disabled(claim, disabled_ids));
    std::vector<events::AttemptRow> attempt_rows;
    std::map<int64_t, std::vector<std::string>> delivered;  // HTTP status → delivery ids
    for (Queue& q : queues) {
      const store::Row& head = *q.items.front().row;
      const std::string& url = head.str(3);
      std::optional<std::string> wait_until;  // set once one of the endpoint's attempts failed
      bool succeeded = false;
      std::string last_error;
      for (Item& item : q.items) {
        const std::string id = item.row->str(0);
        if (!item.posted) {
          PORTCULLIS_RETURN_IF_ERROR(deliveries.release(claim, id, wait_until.value_or(db_now())));
          continue;
        }
        ++attempted;
        const Attempt& a = item.attempt;
        const int now_attempts = static_cast<int>(item.row->i64(2)) + 1;
        log::debug("webhook attempt", {{"delivery_id", id},
                                       {"webhook_id", q.webhook_id},
                                       {"attempt", now_attempts},
                                       {"status", static_cast<long long>(a.status)},
                                       {"ms", static_cast<long long>(a.latency_ms)},
                                       {"error", a.error}});
        const store::Value status_value = status_or_null(a.status);
        attempt_rows.push_back({id, now_attempts, status_value, a.latency_ms,
                                text_or_null(a.error.substr(0, 255)), text_or_null(a.excerpt)});
        if (a.ok()) {
          succeeded = true;
          delivered[a.status].push_back(id);
          continue;
        }
        last_error = !a.error.empty() ? a.error.substr(0, 255) : "HTTP " + std::to_string(a.status);
        const int64_t delay_ms =
            retry_delay_ms(config_.webhooks.retry_schedule_seconds, now_attempts);
        if (delay_ms < 0) {
          PORTCULLIS_RETURN_IF_ERROR(
              deliveries.give_up(claim, id, now_attempts, status_value, last_error));
          wait_until = db_now();
        } else {
          PORTCULLIS_ASSIGN_OR_RETURN(
              std::string next,
              deliveries.retry_later(claim, id, now_attempts, status_value, last_error, delay_ms));
          wait_until = next.empty() ? db_now() : next;
        }
      }
      if (!wait_until) {
        // Every attempt succeeded: the endpoint's failure clock stops, if it ran.
        if (succeeded && !head.is_null(9)) {
          PORTCULLIS_RETURN_IF_ERROR(endpoints.clear_failing(q.webhook_id));
        }
        continue;
      }
      // A failure: the failure clock starts unless it runs; past the limit the endpoint is
      // disabled.
      PORTCULLIS_RETURN_IF_ERROR(endpoints.start_failing(q.webhook_id));
      if (!head.is_null(8) && head.i64(8) >= config_.webhooks.disable_after_seconds) {
        PORTCULLIS_ASSIGN_OR_RETURN(bool disabled, endpoints.disable_failing(q.webhook_id));
        if (disabled) {
          events::Event e = events::Event::of(events::type::kWebhookDisabled);
          e.data["webhook_id"] = q.webhook_id;
          e.data["url"] = url;
          e.data["failing_since"] = db_time_to_rfc3339(head.str(9));
          e.data["last_error"] = last_error;
          disabled_events.push_back(std::move(e));
        }
      }
    }
    PORTCULLIS_RETURN_IF_ERROR(deliveries.record_attempts(attempt_rows));
    for (const auto& [status, ids] : delivered) {
      PORTCULLIS_RETURN_IF_ERROR(deliveries.mark_delivered(claim, status, ids));
    }
    return Status::ok();
  });
  // Not written (the store went away): the lease ends and the round's deliveries are due
  // again, so they are posted again with the same webhook-id (at least once).
  PORTCULLIS_RETURN_IF_ERROR(written);
  auto ms = [](Clock::duration d) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  };
  log::debug("webhook round", {{"deliveries", static_cast<long long>(claimed.size())},
                               {"endpoints", static_cast<long long>(queues.size())},
                               {"claim_ms", ms(claimed_at - started)},
                               {"post_ms", ms(posted_at - claimed_at)},
                               {"record_ms", ms(Clock::now() - posted_at)}});
  for (events::Event& e : disabled_events) {
    log::warn("webhook endpoint disabled after failing",
              {{"webhook_id", e.data["webhook_id"].asString()}});
    recorder.add(std::move(e));
  }
  return attempted;
}

}  // namespace portcullis::webhooks
