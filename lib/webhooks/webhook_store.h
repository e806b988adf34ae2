// Webhook endpoints (contract §7 `/api/v1/webhooks`, docs/events.md): the only writer of the
// `webhooks` table (the delivery process moves an endpoint's failure clock through it). A replay
// re-queues outbox rows through events::DeliveryStore. Secrets are sealed under the
// master key (they must be usable to sign) and shown only when created or rotated.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "crypto/aead.h"
#include "paging/keyset.h"
#include "store/db.h"

namespace portcullis::webhooks {

struct Webhook {
  std::string id;  // wh_…
  std::string url;
  std::vector<std::string> event_types;  // empty = every type
  bool enabled = true;
  std::string disabled_reason;             // "failing" when the delivery process disabled it
  std::string failing_since;               // RFC 3339; empty when the last attempt succeeded
  std::string previous_secret_expires_at;  // RFC 3339; empty when no rotation overlaps
  std::string create_time;
  std::string update_time;
};

struct WebhookFields {
  std::optional<std::string> url;
  std::optional<std::vector<std::string>> event_types;
  std::optional<bool> enabled;
};

// The URL rule (docs/events.md): https, or plain http to a loopback IP literal in local mode.
// In production an IP literal must be a public address; a host name is checked after each
// lookup by the delivery process (no SSRF through DNS).
Status check_url(std::string_view url, bool local_mode);

// `url`, `event_types` (declared types; empty = all), `enabled` from a request body; on create
// `url` is required. Unknown members are refused.
Result<WebhookFields> read_fields(const Json::Value& body, bool create, bool local_mode);

Json::Value to_json(const Webhook& w);

class WebhookStore {
 public:
  WebhookStore(store::Db& db, const crypto::MasterKey& master_key)
      : db_(db), master_key_(master_key) {}

  static paging::Listing listing() { return paging::Listing{"webhooks", ""}; }

  struct Created {
    Webhook webhook;
    std::string secret;  // whsec_…, shown once
  };
  Result<Created> create(const WebhookFields& fields);
  Result<Webhook> get(const std::string& id);
  Result<paging::Page<Webhook>> list(const paging::PageRequest& request,
                                     const paging::TokenCodec& codec);
  // Enabling an endpoint again clears its failure state.
  Result<Webhook> update(const std::string& id, const WebhookFields& fields);
  Status remove(const std::string& id);
  // A new secret; the current one keeps signing for `overlap_seconds` more.
  Result<std::string> rotate_secret(const std::string& id, int64_t overlap_seconds);

  // The HMAC keys that sign deliveries now (the current secret first), from the sealed columns.
  Result<std::vector<std::string>> signing_keys(const std::string& id, const std::string& sealed,
                                                const std::string& previous_sealed,
                                                bool previous_live) const;

  // The delivery process's failure clock (delivery.h): stopped when every attempt of a round
  // succeeded, started (unless it runs) by a failure; an endpoint failing past the limit is
  // disabled (true when this call disabled it).
  Status clear_failing(const std::string& id);
  Status start_failing(const std::string& id);
  Result<bool> disable_failing(const std::string& id);

  // Replay: one delivery of this endpoint (msg_…) queued again as a new message attempt with
  // the same webhook-id; or every event since `since` (DATETIME text) that the endpoint's
  // filter takes: existing deliveries re-queued, missing ones created. Returns how many.
  Result<int64_t> replay_delivery(const std::string& id, const std::string& delivery_id);
  Result<int64_t> replay_since(const std::string& id, const std::string& since);

 private:
  std::string aad(const std::string& id) const { return "webhook_secret:" + id; }

  store::Db& db_;
  const crypto::MasterKey& master_key_;
};

}  // namespace portcullis::webhooks
