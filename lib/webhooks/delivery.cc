#include "webhooks/delivery.h"

#include <chrono>
#include <map>
#include <random>

#include "core/ids.h"
#include "core/time.h"
#include "events/event_store.h"
#include "format/json.h"
#include "log/log.h"
#include "webhooks/signing.h"
#include "webhooks/webhook_store.h"

namespace portcullis::webhooks {
namespace {

constexpr size_t kExcerptBytes = 256;

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

Attempt post_message(const std::string& url, const std::string& message_id, const std::string& body,
                     const std::vector<std::string>& keys, int64_t timestamp,
                     const outbound::Options& options) {
  outbound::PostRequest post;
  post.body = body;
  post.headers = {{"webhook-id", message_id},
                  {"webhook-timestamp", std::to_string(timestamp)},
                  {"webhook-signature", signature_header(keys, message_id, timestamp, body)}};
  const auto started = std::chrono::steady_clock::now();
  auto response = outbound::https_post(url, post, options);
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
    : db_(db), master_key_(master_key), config_(config), options_(std::move(options)) {}

Result<int> Deliverer::run_once(events::Recorder& recorder) {
  const std::string claim = new_id("clm_");
  // 1. Claim.
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows due,
        db_.query("SELECT id FROM webhook_deliveries WHERE state = 'pending' AND "
                  "next_attempt_at <= UTC_TIMESTAMP(6) ORDER BY next_attempt_at, id LIMIT ? "
                  "FOR UPDATE SKIP LOCKED",
                  {static_cast<int64_t>(config_.webhooks.batch)}));
    if (due.empty()) return Status::ok();
    std::string sql =
        "UPDATE webhook_deliveries SET claim = ?, next_attempt_at = UTC_TIMESTAMP(6) + "
        "INTERVAL ? SECOND WHERE id IN (";
    store::Params params{claim, config_.webhooks.lease_seconds};
    for (size_t i = 0; i < due.size(); ++i) {
      sql += i ? ", ?" : "?";
      params.emplace_back(due[i].str(0));
    }
    return db_.execute(sql + ")", params).status();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows claimed,
      db_.query(std::string("SELECT ") + kClaimedColumns +
                    " FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id "
                    "JOIN events e ON e.id = d.event_id WHERE d.claim = ? "
                    "ORDER BY d.webhook_id, e.occurred_at, e.id",
                {claim}));
  if (claimed.empty()) return 0;

  WebhookStore endpoints(db_, master_key_);
  // Endpoints that failed in this round: their later deliveries wait with the failed one.
  std::map<std::string, std::string> held;  // webhook id → DATETIME of the next attempt
  int attempted = 0;
  for (const store::Row& r : claimed) {
    const std::string id = r.str(0), webhook_id = r.str(1), url = r.str(3);
    const int attempts = static_cast<int>(r.i64(2));
    if (auto h = held.find(webhook_id); h != held.end()) {
      (void)db_.execute(
          "UPDATE webhook_deliveries SET claim = NULL, next_attempt_at = ? WHERE id = ? AND "
          "claim = ?",
          {h->second, id, claim});
      continue;
    }
    if (!r.boolean(7)) {
      // Disabled since it was queued: nothing is sent; a replay queues it again.
      (void)db_.execute(
          "UPDATE webhook_deliveries SET state = 'failed', claim = NULL, last_error = "
          "'endpoint disabled', update_time = UTC_TIMESTAMP(6) WHERE id = ? AND claim = ?",
          {id, claim});
      continue;
    }
    std::vector<std::optional<std::string>> cells;
    for (size_t i = kEventColumn; i < r.size(); ++i) cells.push_back(r.opt(i));
    const std::string body = payload(events::event_json(store::Row(std::move(cells))));
    Attempt a;
    auto keys = endpoints.signing_keys(webhook_id, r.str(4), r.str(5), r.boolean(6));
    if (!keys) {
      a.error = "the signing secret cannot be opened";
      log::error("webhook secret cannot be opened",
                 {{"webhook_id", webhook_id}, {"error", keys.status().message()}});
    } else {
      a = post_message(url, id, body, *keys, unix_now(), options_);
    }
    ++attempted;
    const int now_attempts = attempts + 1;
    log::debug("webhook attempt", {{"delivery_id", id},
                                   {"webhook_id", webhook_id},
                                   {"attempt", now_attempts},
                                   {"status", static_cast<long long>(a.status)},
                                   {"ms", static_cast<long long>(a.latency_ms)},
                                   {"error", a.error}});
    // NULL when there was no response / no error.
    auto status_value = [&]() -> store::Value {
      if (a.status == 0) return nullptr;
      return static_cast<int64_t>(a.status);
    };
    const std::string error_text = a.ok()             ? ""
                                   : !a.error.empty() ? a.error.substr(0, 255)
                                                      : "HTTP " + std::to_string(a.status);
    auto error_value = [&]() -> store::Value {
      if (error_text.empty()) return nullptr;
      return error_text;
    };
    auto excerpt_value = [&]() -> store::Value {
      if (a.excerpt.empty()) return nullptr;
      return a.excerpt;
    };
    (void)db_.execute(
        "INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, "
        "latency_ms, error, response_excerpt) VALUES (?, ?, UTC_TIMESTAMP(6), ?, ?, ?, ?)",
        {id, static_cast<int64_t>(now_attempts), status_value(), a.latency_ms,
         a.error.empty() ? store::Value(nullptr) : store::Value(a.error.substr(0, 255)),
         excerpt_value()});
    if (a.ok()) {
      (void)db_.execute(
          "UPDATE webhook_deliveries SET state = 'delivered', attempts = ?, claim = NULL, "
          "last_status = ?, last_error = NULL, update_time = UTC_TIMESTAMP(6) WHERE id = ? AND "
          "claim = ?",
          {static_cast<int64_t>(now_attempts), status_value(), id, claim});
      (void)db_.execute(
          "UPDATE webhooks SET failing_since = NULL WHERE id = ? AND "
          "failing_since IS NOT NULL",
          {webhook_id});
      continue;
    }
    int64_t delay_ms = retry_delay_ms(config_.webhooks.retry_schedule_seconds, now_attempts);
    if (delay_ms < 0) {
      (void)db_.execute(
          "UPDATE webhook_deliveries SET state = 'failed', attempts = ?, claim = NULL, "
          "last_status = ?, last_error = ?, update_time = UTC_TIMESTAMP(6) WHERE id = ? AND "
          "claim = ?",
          {static_cast<int64_t>(now_attempts), status_value(), error_value(), id, claim});
    } else {
      (void)db_.execute(
          "UPDATE webhook_deliveries SET attempts = ?, claim = NULL, last_status = ?, "
          "last_error = ?, next_attempt_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, "
          "update_time = UTC_TIMESTAMP(6) WHERE id = ? AND claim = ?",
          {static_cast<int64_t>(now_attempts), status_value(), error_value(), delay_ms * 1000, id,
           claim});
      auto next = db_.query("SELECT next_attempt_at FROM webhook_deliveries WHERE id = ?", {id});
      if (next && !next->empty()) held[webhook_id] = (*next)[0].str(0);
    }
    // The endpoint's failure clock; past the limit it is disabled.
    (void)db_.execute(
        "UPDATE webhooks SET failing_since = UTC_TIMESTAMP(6) WHERE id = ? AND "
        "failing_since IS NULL",
        {webhook_id});
    const bool was_failing = !r.is_null(8);
    if (was_failing && r.i64(8) >= config_.webhooks.disable_after_seconds) {
      auto disabled = db_.execute(
          "UPDATE webhooks SET enabled = 0, disabled_reason = 'failing', update_time = "
          "UTC_TIMESTAMP(6) WHERE id = ? AND enabled = 1",
          {webhook_id});
      if (disabled && *disabled > 0) {
        log::warn("webhook endpoint disabled after failing", {{"webhook_id", webhook_id}});
        events::Event e = events::Event::of(events::type::kWebhookDisabled);
        e.data["webhook_id"] = webhook_id;
        e.data["url"] = url;
        e.data["failing_since"] = db_time_to_rfc3339(r.str(9));
        e.data["last_error"] = error_text;
        recorder.add(std::move(e));
        held[webhook_id] = db_now();
      }
    }
  }
  return attempted;
}

}  // namespace portcullis::webhooks
