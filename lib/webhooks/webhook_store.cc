#include "webhooks/webhook_store.h"

#include <set>

#include "core/ids.h"
#include "core/time.h"
#include "events/delivery_store.h"
#include "events/types.h"
#include "format/json.h"
#include "format/json_strings.h"
#include "outbound/address.h"
#include "outbound/url.h"
#include "webhooks/signing.h"

namespace portcullis::webhooks {
namespace {

constexpr const char* kColumns =
    "id, url, event_types, enabled, disabled_reason, failing_since, "
    "CASE WHEN previous_secret_expires_at > UTC_TIMESTAMP(6) THEN previous_secret_expires_at END, "
    "create_time, update_time";
constexpr size_t kMaxEventTypes = 100;

Webhook from_row(const store::Row& r) {
  Webhook w;
  w.id = r.str(0);
  w.url = r.str(1);
  if (auto types = json::parse(r.str(2))) w.event_types = json::string_elements(*types);
  w.enabled = r.boolean(3);
  w.disabled_reason = r.str(4);
  if (!r.is_null(5)) w.failing_since = db_time_to_rfc3339(r.str(5));
  if (!r.is_null(6)) w.previous_secret_expires_at = db_time_to_rfc3339(r.str(6));
  w.create_time = db_time_to_rfc3339(r.str(7));
  w.update_time = db_time_to_rfc3339(r.str(8));
  return w;
}

std::string types_json(const std::vector<std::string>& types) {
  Json::Value a(Json::arrayValue);
  for (const auto& t : types) a.append(t);
  return json::write(a);
}

Status not_found(const std::string& id) {
  return Status::not_found("no webhook endpoint " + id.substr(0, 64));
}

}  // namespace

Status check_url(std::string_view url, bool local_mode) {
  if (url.rfind("http://", 0) == 0) {
    auto parsed = outbound::parse_https_url("https://" + std::string(url.substr(7)));
    if (!local_mode || !parsed || !parsed->ip ||
        outbound::special_use_block(*parsed->ip) != "loopback") {
      return Status::invalid_argument(
          "url must be https (plain http only to a loopback address in local mode)");
    }
    return Status::ok();
  }
  auto parsed = outbound::parse_https_url(url);
  if (!parsed) return Status::invalid_argument("url: " + parsed.status().message());
  if (!local_mode && parsed->ip && outbound::is_special_use(*parsed->ip)) {
    return Status::invalid_argument("url must name a public address");
  }
  return Status::ok();
}

Result<WebhookFields> read_fields(const Json::Value& body, bool create, bool local_mode) {
  WebhookFields f;
  for (const auto& name : body.getMemberNames()) {
    if (name != "url" && name != "event_types" && name != "enabled") {
      return Status::invalid_argument("unknown field " + name.substr(0, 64));
    }
  }
  if (body.isMember("url")) {
    if (!body["url"].isString()) return Status::invalid_argument("url must be a string");
    PORTCULLIS_RETURN_IF_ERROR(check_url(body["url"].asString(), local_mode));
    f.url = body["url"].asString();
  } else if (create) {
    return Status::invalid_argument("url is required");
  }
  if (body.isMember("event_types")) {
    const Json::Value& types = body["event_types"];
    if (!types.isArray() || types.size() > kMaxEventTypes) {
      return Status::invalid_argument("event_types must be an array of event types");
    }
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const auto& t : types) {
      if (!t.isString() || !events::find_type(t.asString())) {
        return Status::invalid_argument("event_types: unknown event type " +
                                        (t.isString() ? t.asString().substr(0, 64) : ""));
      }
      if (seen.insert(t.asString()).second) out.push_back(t.asString());
    }
    f.event_types = std::move(out);
  }
  if (body.isMember("enabled")) {
    if (!body["enabled"].isBool()) return Status::invalid_argument("enabled must be a boolean");
    f.enabled = body["enabled"].asBool();
  }
  return f;
}

Json::Value to_json(const Webhook& w) {
  Json::Value v(Json::objectValue);
  v["id"] = w.id;
  v["url"] = w.url;
  v["event_types"] = Json::Value(Json::arrayValue);
  for (const auto& t : w.event_types) v["event_types"].append(t);
  v["enabled"] = w.enabled;
  if (!w.disabled_reason.empty()) v["disabled_reason"] = w.disabled_reason;
  if (!w.failing_since.empty()) v["failing_since"] = w.failing_since;
  if (!w.previous_secret_expires_at.empty()) {
    v["previous_secret_expires_at"] = w.previous_secret_expires_at;
  }
  v["create_time"] = w.create_time;
  v["update_time"] = w.update_time;
  return v;
}

Result<WebhookStore::Created> WebhookStore::create(const WebhookFields& fields) {
  Created out;
  out.webhook.id = new_id("wh_");
  out.secret = new_secret();
  PORTCULLIS_ASSIGN_OR_RETURN(std::string sealed,
                              master_key_.seal(out.secret, aad(out.webhook.id)));
  std::string now = db_now();
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("INSERT INTO webhooks (id, url, event_types, enabled, secret_sealed, "
                  "create_time, update_time) VALUES (?, ?, ?, ?, ?, ?, ?)",
                  {out.webhook.id, *fields.url,
                   types_json(fields.event_types.value_or(std::vector<std::string>{})),
                   fields.enabled.value_or(true), sealed, now, now})
          .status());
  PORTCULLIS_ASSIGN_OR_RETURN(out.webhook, get(out.webhook.id));
  return out;
}

Result<Webhook> WebhookStore::get(const std::string& id) {
  if (!is_valid_id(id, "wh_")) return not_found(id);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kColumns + " FROM webhooks WHERE id = ?", {id}));
  if (rows.empty()) return not_found(id);
  return from_row(rows[0]);
}

Result<paging::Page<Webhook>> WebhookStore::list(const paging::PageRequest& request,
                                                 const paging::TokenCodec& codec) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      paging::Page<store::Row> rows,
      paging::fetch_page(db_, paging::KeysetQuery{.columns = kColumns, .from = "webhooks"}, request,
                         codec));
  return paging::convert_page<Webhook>(
      std::move(rows), [](const store::Row& r) -> Result<Webhook> { return from_row(r); });
}

Result<Webhook> WebhookStore::update(const std::string& id, const WebhookFields& f) {
  PORTCULLIS_RETURN_IF_ERROR(get(id).status());
  std::string now = db_now();
  Status st = db_.transaction([&]() -> Status {
    if (f.url) {
      PORTCULLIS_RETURN_IF_ERROR(
          db_.execute("UPDATE webhooks SET url = ?, update_time = ? WHERE id = ?",
                      {*f.url, now, id})
              .status());
    }
    if (f.event_types) {
      PORTCULLIS_RETURN_IF_ERROR(
          db_.execute("UPDATE webhooks SET event_types = ?, update_time = ? WHERE id = ?",
                      {types_json(*f.event_types), now, id})
              .status());
    }
    if (f.enabled) {
      // Enabling again starts from a clean slate: the failure clock restarts.
      PORTCULLIS_RETURN_IF_ERROR(
          db_.execute(*f.enabled ? "UPDATE webhooks SET enabled = 1, disabled_reason = NULL, "
                                   "failing_since = NULL, update_time = ? WHERE id = ?"
                                 : "UPDATE webhooks SET enabled = 0, disabled_reason = NULL, "
                                   "update_time = ? WHERE id = ?",
                      {now, id})
              .status());
    }
    return Status::ok();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  return get(id);
}

Status WebhookStore::remove(const std::string& id) {
  if (!is_valid_id(id, "wh_")) return not_found(id);
  PORTCULLIS_ASSIGN_OR_RETURN(uint64_t n, db_.execute("DELETE FROM webhooks WHERE id = ?", {id}));
  if (n == 0) return not_found(id);
  return Status::ok();
}

Result<std::string> WebhookStore::rotate_secret(const std::string& id, int64_t overlap_seconds) {
  std::string secret = new_secret();
  PORTCULLIS_ASSIGN_OR_RETURN(std::string sealed, master_key_.seal(secret, aad(id)));
  bool found = false;
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows rows,
        db_.query("SELECT secret_sealed FROM webhooks WHERE id = ? FOR UPDATE", {id}));
    found = !rows.empty();
    if (!found) return Status::ok();
    return db_
        .execute(
            "UPDATE webhooks SET previous_secret_sealed = secret_sealed, "
            "previous_secret_expires_at = UTC_TIMESTAMP(6) + INTERVAL ? SECOND, "
            "secret_sealed = ?, update_time = UTC_TIMESTAMP(6) WHERE id = ?",
            {overlap_seconds, sealed, id})
        .status();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  if (!found) return not_found(id);
  return secret;
}

Result<std::vector<std::string>> WebhookStore::signing_keys(const std::string& id,
                                                            const std::string& sealed,
                                                            const std::string& previous_sealed,
                                                            bool previous_live) const {
  std::vector<std::string> keys;
  PORTCULLIS_ASSIGN_OR_RETURN(std::string secret, master_key_.open(sealed, aad(id)));
  PORTCULLIS_ASSIGN_OR_RETURN(std::string key, secret_key(secret));
  keys.push_back(std::move(key));
  if (previous_live && !previous_sealed.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(std::string previous, master_key_.open(previous_sealed, aad(id)));
    PORTCULLIS_ASSIGN_OR_RETURN(std::string previous_key, secret_key(previous));
    keys.push_back(std::move(previous_key));
  }
  return keys;
}

Status WebhookStore::clear_failing(const std::string& id) {
  return db_.execute("UPDATE webhooks SET failing_since = NULL WHERE id = ?", {id}).status();
}

Status WebhookStore::start_failing(const std::string& id) {
  return db_
      .execute(
          "UPDATE webhooks SET failing_since = UTC_TIMESTAMP(6) WHERE id = ? AND failing_since "
          "IS NULL",
          {id})
      .status();
}

Result<bool> WebhookStore::disable_failing(const std::string& id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t disabled,
      db_.execute("UPDATE webhooks SET enabled = 0, disabled_reason = 'failing', update_time = "
                  "UTC_TIMESTAMP(6) WHERE id = ? AND enabled = 1",
                  {id}));
  return disabled > 0;
}

Result<int64_t> WebhookStore::replay_delivery(const std::string& id,
                                              const std::string& delivery_id) {
  PORTCULLIS_RETURN_IF_ERROR(get(id).status());
  PORTCULLIS_RETURN_IF_ERROR(events::DeliveryStore(db_).requeue(id, delivery_id));
  return 1;
}

Result<int64_t> WebhookStore::replay_since(const std::string& id, const std::string& since) {
  PORTCULLIS_RETURN_IF_ERROR(get(id).status());
  int64_t total = 0;
  Status st = db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(total, events::DeliveryStore(db_).requeue_since(id, since));
    return Status::ok();
  });
  PORTCULLIS_RETURN_IF_ERROR(st);
  return total;
}

}  // namespace portcullis::webhooks
