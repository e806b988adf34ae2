// Ordered schema migrations (sql/NNNN_name.sql), compiled into the binary and applied by
// `portcullis migrate`. Each applied version is recorded in `schema_migrations`; applying is
// idempotent and safe to run from several nodes at once (a named lock serialises them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace portcullis::store {

struct Migration {
  int version;
  std::string name;
  std::string sql;  // one or more statements separated by ";" at the end of a line
};

// Every migration in sql/, ordered by version. Generated at build time.
const std::vector<Migration>& embedded_migrations();

}  // namespace portcullis::store
