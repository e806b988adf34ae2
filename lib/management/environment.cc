#include "management/environment.h"

#include <set>
#include <string>

#include "management/scopes.h"

namespace portcullis::management {

Result<std::optional<NewApiClient>> EnvironmentStore::bootstrap() {
  std::optional<NewApiClient> created;
  Status st = db_.transaction([&]() -> Status {
    created.reset();
    auto rows = db_.query("SELECT bootstrap_client_id FROM environment FOR UPDATE");
    if (!rows) return rows.status();
    if (!rows->empty()) return Status::ok();
    std::set<std::string> every(all_scopes().begin(), all_scopes().end());
    PORTCULLIS_ASSIGN_OR_RETURN(NewApiClient made, ApiClientStore(db_).create("bootstrap", every));
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("INSERT INTO environment (singleton, bootstrapped_at, bootstrap_client_id) "
                    "VALUES (1, UTC_TIMESTAMP(6), ?)",
                    {made.client.id})
            .status());
    created = std::move(made);
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return created;
}

}  // namespace portcullis::management
