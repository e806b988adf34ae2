// What the stores of identity-provider connections (sso_connections, social_connections)
// share in their rows: the configuration as JSON, a client secret sealed under the master key
// with the connection's id as associated data, and the row's times.
#pragma once

#include <json/value.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/status.h"
#include "crypto/aead.h"
#include "store/db.h"

namespace portcullis::sso {

// The trailing columns of a connection row, in this order (read_stored_columns).
inline constexpr const char* kStoredColumns =
    "config, secret_sealed IS NOT NULL, create_time, update_time";

struct StoredColumns {
  Json::Value config;
  bool has_client_secret = false;
  std::string create_time;  // RFC 3339
  std::string update_time;  // RFC 3339
};

// The kStoredColumns of `row` from column `first` on; Internal when the configuration is not JSON.
Result<StoredColumns> read_stored_columns(const store::Row& row, size_t first);

// Sets the shared fields of connection `c` from `stored`: its configuration through the
// read_config(const Json::Value&, C&) declared beside C, the secret flag and the times.
template <typename C>
void apply_stored_columns(StoredColumns stored, C& c) {
  read_config(stored.config, c);
  c.has_client_secret = stored.has_client_secret;
  c.create_time = std::move(stored.create_time);
  c.update_time = std::move(stored.update_time);
}

// The associated data binding a sealed client secret to connection `id` of `kind`
// ("sso_connection", "social_connection"): a secret cannot be moved to another row.
std::string secret_aad(std::string_view kind, const std::string& id);

// A new client secret sealed for connection `id` of `kind`, as the value of a
// `secret_sealed = COALESCE(?, secret_sealed)` parameter: NULL (keep the stored one) when no
// secret was given.
Result<store::Value> sealed_secret_param(const crypto::MasterKey& master_key,
                                         const std::optional<std::string>& client_secret,
                                         std::string_view kind, const std::string& id);

}  // namespace portcullis::sso
