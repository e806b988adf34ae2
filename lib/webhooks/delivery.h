// The delivery of the events outbox to webhook endpoints (docs/events.md), run by the
// portcullis-webhooks process; several may run on several nodes.
//
// One round:
//  1. claim: in a short transaction, the oldest due pending deliveries are selected with
//     SELECT … FOR UPDATE SKIP LOCKED (other processes skip them instead of waiting) and
//     leased: their next_attempt_at moves `lease_seconds` ahead and they carry this round's
//     claim id. A process that dies leaves them due again when the lease ends (at-least-once).
//  2. post each, per endpoint in event order, through the SSRF guard (lib/outbound: https only,
//     plain http only to loopback in local mode, every resolved address checked and the
//     connection pinned to it, no redirects, the response read capped), signed as Standard
//     Webhooks (signing.h), within `timeout_ms`.
//  3. record: every attempt (status, latency, an excerpt of the answer or the error); a 2xx
//     delivers; anything else schedules the next attempt after the retry schedule's wait (with
//     ± 20 % jitter) or, past its end, gives up (state failed). The endpoint's remaining
//     deliveries of the round wait for the same time, so a broken endpoint costs one attempt
//     per round and its messages stay in order. An endpoint that has failed continuously for
//     `disable_after_seconds` is disabled (event webhook.disabled).
// Updates are conditional on the claim id: a round whose lease expired cannot overwrite the
// result of the round that took over.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "crypto/aead.h"
#include "events/recorder.h"
#include "outbound/https_get.h"
#include "store/db.h"

namespace portcullis::webhooks {

// The Standard Webhooks payload of an event: {"type","timestamp","data":Event}.
std::string payload(const Json::Value& event);

// Result of one HTTP attempt.
struct Attempt {
  long status = 0;  // 0: no response
  int64_t latency_ms = 0;
  std::string error;    // empty on a response
  std::string excerpt;  // the start of the response body
  bool ok() const { return status >= 200 && status < 300; }
};

// Posts one signed message to `url` through `session` (its connections kept alive between
// posts; the SSRF guard's rules per `options` on every post).
Attempt post_message(outbound::Session& session, const std::string& url,
                     const std::string& message_id, const std::string& body,
                     const std::vector<std::string>& keys, int64_t timestamp,
                     const outbound::Options& options);

// The wait before attempt `attempts + 1` after `attempts` failures, with jitter; -1 when the
// schedule is exhausted (give up).
int64_t retry_delay_ms(const std::vector<int64_t>& schedule_seconds, int attempts);

class Deliverer {
 public:
  Deliverer(store::Db& db, const crypto::MasterKey& master_key, const config::Config& config,
            outbound::Options options);

  // One round; returns how many deliveries were attempted. Events it records
  // (webhook.disabled) go to `recorder`.
  Result<int> run_once(events::Recorder& recorder);

 private:
  store::Db& db_;
  const crypto::MasterKey& master_key_;
  const config::Config& config_;
  outbound::Options options_;
  // One per posting thread: each keeps its connections open from round to round.
  std::vector<outbound::Session> sessions_;
};

// The outbound options of deliveries for this config: CA file, loopback http in local mode, the
// timeout, a capped response read.
outbound::Options delivery_options(const config::Config& config);

}  // namespace portcullis::webhooks
