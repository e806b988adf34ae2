// The environment record (table environment, one row): created once by `portcullis bootstrap`
// together with the first management API client, whose secret is shown that once.
#pragma once

#include <optional>

#include "core/status.h"
#include "management/api_clients.h"
#include "store/db.h"

namespace portcullis::management {

class EnvironmentStore {
 public:
  explicit EnvironmentStore(store::Db& db) : db_(db) {}

  // In one transaction, whose environment row is the lock (a second bootstrap, or one on
  // another node, finds it): the bootstrap API client holding every management scope, and the
  // row naming it. nullopt when the environment was bootstrapped already.
  Result<std::optional<NewApiClient>> bootstrap();

 private:
  store::Db& db_;
};

}  // namespace portcullis::management
