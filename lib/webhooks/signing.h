// Standard Webhooks signatures (https://www.standardwebhooks.com/, the "symmetric" scheme):
//
//   webhook-id:        the message id (stable across retries and replays)
//   webhook-timestamp: Unix seconds of this attempt
//   webhook-signature: "v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>", one
//                      per live secret, separated by spaces (during a rotation both sign)
//
// A secret is "whsec_" + base64 of 24 random bytes; the HMAC key is those bytes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace portcullis::webhooks {

// A fresh signing secret, "whsec_…".
std::string new_secret();

// The HMAC key of a "whsec_…" secret; InvalidArgument for anything else.
Result<std::string> secret_key(std::string_view secret);

// "v1,<base64>" for one key.
std::string sign(std::string_view key, std::string_view id, int64_t timestamp,
                 std::string_view body);

// The webhook-signature header value for every key, space-separated.
std::string signature_header(const std::vector<std::string>& keys, std::string_view id,
                             int64_t timestamp, std::string_view body);

}  // namespace portcullis::webhooks
