#include "events/delivery_store.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "core/time.h"
#include "format/json.h"

namespace portcullis::events {
using store::in_list;

Status DeliveryStore::enqueue(store::Params event_ids) {
  if (event_ids.empty()) return Status::ok();
  const std::string list = in_list(event_ids, event_ids.size());
  return db_
      .execute(
          "INSERT INTO webhook_deliveries (id, webhook_id, event_id, state, attempts, "
          "next_attempt_at, create_time, update_time) "
          "SELECT CONCAT('msg_', SUBSTRING(e.id, 5), '_', SUBSTRING(w.id, 4)), w.id, e.id, "
          "'pending', 0, e.occurred_at, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) "
          "FROM events e JOIN webhooks w ON w.enabled = 1 AND (JSON_LENGTH(w.event_types) = 0 "
          "OR JSON_CONTAINS(w.event_types, JSON_QUOTE(e.type))) WHERE e.id IN (" +
              list + ")",
          event_ids)
      .status();
}

Result<std::vector<std::string>> DeliveryStore::claim(const std::string& claim,
                                                      int64_t lease_seconds, int64_t batch) {
  std::vector<std::string> ids;
  PORTCULLIS_RETURN_IF_ERROR(db_.transaction([&]() -> Status {
    ids.clear();
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows due,
        db_.query("SELECT id FROM webhook_deliveries WHERE state = 'pending' AND "
                  "next_attempt_at <= UTC_TIMESTAMP(6) ORDER BY next_attempt_at, id LIMIT ? "
                  "FOR UPDATE SKIP LOCKED",
                  {batch}));
    if (due.empty()) return Status::ok();
    store::Params params{claim, lease_seconds};
    for (const store::Row& r : due) params.emplace_back(r.str(0));
    const std::string list = in_list(params, due.size());
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("UPDATE webhook_deliveries SET claim = ?, next_attempt_at = UTC_TIMESTAMP(6) "
                    "+ INTERVAL ? SECOND WHERE id IN (" +
                        list + ")",
                    params)
            .status());
    for (const store::Row& r : due) ids.push_back(r.str(0));
    return Status::ok();
  }));
  return ids;
}

Status DeliveryStore::fail_disabled(const std::string& claim, const std::vector<std::string>& ids) {
  if (ids.empty()) return Status::ok();
  store::Params params{claim};
  for (const std::string& id : ids) params.emplace_back(id);
  const std::string list = in_list(params, ids.size());
  return db_
      .execute(
          "UPDATE webhook_deliveries SET state = 'failed', claim = NULL, last_error = 'endpoint "
          "disabled', update_time = UTC_TIMESTAMP(6) WHERE claim = ? AND id IN (" +
              list + ")",
          params)
      .status();
}

Status DeliveryStore::release(const std::string& claim, const std::string& id,
                              const std::string& due_at) {
  return db_
      .execute(
          "UPDATE webhook_deliveries SET claim = NULL, next_attempt_at = ? WHERE id = ? AND "
          "claim = ?",
          {due_at, id, claim})
      .status();
}

Status DeliveryStore::give_up(const std::string& claim, const std::string& id, int64_t attempts,
                              const store::Value& status, const std::string& last_error) {
  return db_
      .execute(
          "UPDATE webhook_deliveries SET state = 'failed', attempts = ?, claim = NULL, "
          "last_status = ?, last_error = ?, update_time = UTC_TIMESTAMP(6) WHERE id = ? AND "
          "claim = ?",
          {attempts, status, last_error, id, claim})
      .status();
}

Result<std::string> DeliveryStore::retry_later(const std::string& claim, const std::string& id,
                                               int64_t attempts, const store::Value& status,
                                               const std::string& last_error, int64_t delay_ms) {
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("UPDATE webhook_deliveries SET attempts = ?, claim = NULL, last_status = ?, "
                  "last_error = ?, next_attempt_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, "
                  "update_time = UTC_TIMESTAMP(6) WHERE id = ? AND claim = ?",
                  {attempts, status, last_error, delay_ms * 1000, id, claim})
          .status());
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows next,
      db_.query("SELECT next_attempt_at FROM webhook_deliveries WHERE id = ?", {id}));
  if (next.empty()) return std::string();
  return next[0].str(0);
}

Status DeliveryStore::mark_delivered(const std::string& claim, int64_t status,
                                     const std::vector<std::string>& ids) {
  if (ids.empty()) return Status::ok();
  store::Params params{status, claim};
  for (const std::string& id : ids) params.emplace_back(id);
  const std::string list = in_list(params, ids.size());
  return db_
      .execute(
          "UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, claim = "
          "NULL, last_status = ?, last_error = NULL, update_time = UTC_TIMESTAMP(6) WHERE claim "
          "= ? AND id IN (" +
              list + ")",
          params)
      .status();
}

Status DeliveryStore::record_attempts(const std::vector<AttemptRow>& attempts) {
  if (attempts.empty()) return Status::ok();
  return store::insert_rows(
      db_,
      "INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, "
      "latency_ms, error, response_excerpt) VALUES ",
      "(?, ?, UTC_TIMESTAMP(6), ?, ?, ?, ?)", attempts.size(),
      [&](size_t i, store::Params& params) {
        const AttemptRow& a = attempts[i];
        params.insert(params.end(),
                      {a.delivery_id, a.attempt, a.status_code, a.latency_ms, a.error, a.excerpt});
      });
}

Status DeliveryStore::requeue(const std::string& webhook_id, const std::string& delivery_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t n,
      db_.execute("UPDATE webhook_deliveries SET state = 'pending', attempts = 0, claim = NULL, "
                  "next_attempt_at = UTC_TIMESTAMP(6), update_time = UTC_TIMESTAMP(6) "
                  "WHERE id = ? AND webhook_id = ?",
                  {delivery_id, webhook_id}));
  if (n > 0) return Status::ok();
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                              db_.query("SELECT 1 FROM webhook_deliveries WHERE id = ? AND "
                                        "webhook_id = ?",
                                        {delivery_id, webhook_id}));
  if (rows.empty()) return Status::not_found("no delivery " + delivery_id.substr(0, 64));
  return Status::ok();
}

Result<int64_t> DeliveryStore::requeue_since(const std::string& webhook_id,
                                             const std::string& since) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t requeued,
      db_.execute("UPDATE webhook_deliveries d JOIN events e ON e.id = d.event_id "
                  "SET d.state = 'pending', d.attempts = 0, d.claim = NULL, "
                  "d.next_attempt_at = e.occurred_at, d.update_time = UTC_TIMESTAMP(6) "
                  "WHERE d.webhook_id = ? AND e.occurred_at >= ?",
                  {webhook_id, since}));
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t created,
      db_.execute(
          "INSERT IGNORE INTO webhook_deliveries (id, webhook_id, event_id, state, attempts, "
          "next_attempt_at, create_time, update_time) "
          "SELECT CONCAT('msg_', SUBSTRING(e.id, 5), '_', SUBSTRING(w.id, 4)), w.id, e.id, "
          "'pending', 0, e.occurred_at, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) "
          "FROM webhooks w JOIN events e ON e.occurred_at >= ? AND "
          "(JSON_LENGTH(w.event_types) = 0 OR JSON_CONTAINS(w.event_types, JSON_QUOTE(e.type))) "
          "WHERE w.id = ?",
          {since, webhook_id}));
  return static_cast<int64_t>(requeued + created);
}

paging::Listing deliveries_listing(const std::string& webhook_id) {
  return paging::Listing{"webhook_deliveries", "webhook_id=" + webhook_id};
}

namespace {

// A delivery's attempts as one column, `{"<webhook_attempts.id>": {"attempt": …}, …}`, so the
// listing costs no query per delivery; attempts_of_column puts them in the order they were made.
// Keyed by the row's id, not the attempt number: a replay numbers a delivery's attempts from 1
// again, and a repeated key would hide an attempt. Not JSON_ARRAYAGG, for the reason given at
// lib/scim/scim_store.cc kUserGroupsColumn: MariaDB makes an on-disk (Aria) temporary table at
// each statement for it, and 10.11 crashes when making one fails under load; JSON_OBJECTAGG
// appends to a string. NULL without attempts.
const char* kAttemptLogColumn =
    "(SELECT JSON_OBJECTAGG(a.id, JSON_OBJECT('attempt', a.attempt, 'attempted_at', "
    "a.attempted_at, 'status_code', a.status_code, 'latency_ms', a.latency_ms, 'error', a.error, "
    "'response_excerpt', a.response_excerpt)) FROM webhook_attempts a WHERE a.delivery_id = "
    "webhook_deliveries.id)";

// The attempts of a kAttemptLogColumn value in the order they were made: by attempted_at (a
// DATETIME(6) as text sorts as its time), then attempt number, then row id, the key read as a
// number (as text "10" < "9"). Empty when the value does not parse.
std::vector<Json::Value> attempts_of_column(const std::string& value) {
  std::vector<Json::Value> attempts;
  const auto parsed = json::parse(value);
  if (!parsed || !parsed->isObject()) return attempts;
  struct Made {
    std::string attempted_at;
    int64_t attempt = 0;
    int64_t id = 0;
    Json::Value fields;
  };
  std::vector<Made> made;
  for (const auto& key : parsed->getMemberNames()) {
    const Json::Value& a = (*parsed)[key];
    int64_t id = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || !a.isObject() ||
        !a["attempt"].isInt64() || !a["attempted_at"].isString()) {
      continue;
    }
    made.push_back({a["attempted_at"].asString(), a["attempt"].asInt64(), id, a});
  }
  std::sort(made.begin(), made.end(), [](const Made& x, const Made& y) {
    return std::tie(x.attempted_at, x.attempt, x.id) < std::tie(y.attempted_at, y.attempt, y.id);
  });
  attempts.reserve(made.size());
  for (auto& m : made) attempts.push_back(std::move(m.fields));
  return attempts;
}

}  // namespace

Result<paging::Page<Json::Value>> list_deliveries(store::Db& db, const std::string& webhook_id,
                                                  const paging::PageRequest& request,
                                                  const paging::TokenCodec& codec) {
  paging::KeysetQuery q{
      .columns = std::string("id, event_id, state, attempts, last_status, last_error, "
                             "next_attempt_at, ") +
                 kAttemptLogColumn,
      .from = "webhook_deliveries",
      .where = "webhook_id = ?",
      .params = {webhook_id},
      .newest_first = true};
  PORTCULLIS_ASSIGN_OR_RETURN(paging::Page<store::Row> rows,
                              paging::fetch_page(db, q, request, codec));
  return paging::convert_page<Json::Value>(
      std::move(rows), [](const store::Row& r) -> Result<Json::Value> {
        Json::Value v(Json::objectValue);
        v["id"] = r.str(0);
        v["event_id"] = r.str(1);
        v["state"] = r.str(2);
        v["attempts"] = static_cast<Json::Int64>(r.i64(3));
        if (!r.is_null(4)) v["last_status"] = static_cast<Json::Int64>(r.i64(4));
        if (!r.is_null(5)) v["last_error"] = r.str(5);
        if (r.str(2) == "pending") v["next_attempt_time"] = db_time_to_rfc3339(r.str(6));
        v["attempt_log"] = Json::Value(Json::arrayValue);
        for (Json::Value& a : attempts_of_column(r.str(7))) {
          for (const auto& key : a.getMemberNames()) {
            if (a[key].isNull()) a.removeMember(key);
          }
          if (a["attempted_at"].isString()) {
            a["attempted_at"] = db_time_to_rfc3339(a["attempted_at"].asString());
          }
          v["attempt_log"].append(std::move(a));
        }
        return v;
      });
}

}  // namespace portcullis::events
