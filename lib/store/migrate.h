// Applies the migrations not yet recorded in `schema_migrations`, in version order.
#pragma once

#include <vector>

#include "core/status.h"
#include "store/db.h"
#include "store/migrations.h"

namespace portcullis::store {

// Returns how many migrations were applied (0 when the schema was current). Migrations must be
// written to be re-runnable (IF NOT EXISTS): MySQL commits DDL implicitly, so a migration that
// failed halfway cannot be rolled back and is retried whole.
Result<int> migrate(Db& db, const std::vector<Migration>& migrations);

}  // namespace portcullis::store
