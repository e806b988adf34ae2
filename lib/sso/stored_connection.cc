#include "sso/stored_connection.h"

#include "core/time.h"
#include "format/json.h"

namespace portcullis::sso {

Result<StoredColumns> read_stored_columns(const store::Row& row, size_t first) {
  auto config = json::parse(row.str(first));
  if (!config) return Status::internal("a stored connection configuration is not JSON");
  return StoredColumns{.config = std::move(*config),
                       .has_client_secret = row.boolean(first + 1),
                       .create_time = db_time_to_rfc3339(row.str(first + 2)),
                       .update_time = db_time_to_rfc3339(row.str(first + 3))};
}

std::string secret_aad(std::string_view kind, const std::string& id) {
  return std::string(kind) + ":" + id + ":client_secret";
}

Result<store::Value> sealed_secret_param(const crypto::MasterKey& master_key,
                                         const std::optional<std::string>& client_secret,
                                         std::string_view kind, const std::string& id) {
  if (!client_secret) return store::Value(nullptr);
  PORTCULLIS_ASSIGN_OR_RETURN(std::string sealed,
                              master_key.seal(*client_secret, secret_aad(kind, id)));
  return store::Value(std::move(sealed));
}

}  // namespace portcullis::sso
