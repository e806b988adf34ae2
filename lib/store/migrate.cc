#include "store/migrate.h"

#include <set>

#include "log/log.h"
#include "store/db.h"
#include "store/migrations.h"

namespace portcullis::store {

Result<int> migrate(Db& db, const std::vector<Migration>& migrations) {
  PORTCULLIS_RETURN_IF_ERROR(
      db.execute_script("CREATE TABLE IF NOT EXISTS schema_migrations (\n"
                        "  version INT NOT NULL PRIMARY KEY,\n"
                        "  name VARCHAR(200) NOT NULL,\n"
                        "  applied_at DATETIME(6) NOT NULL\n"
                        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;\n"));
  // Several nodes may run `migrate` at once during a rolling deploy: one applies, the others
  // wait and then find nothing left to do.
  PORTCULLIS_ASSIGN_OR_RETURN(Rows lock, db.query("SELECT GET_LOCK('portcullis.migrate', 120)"));
  if (lock.empty() || lock[0].i64(0) != 1) {
    return Status::unavailable("another migration holds the lock; try again");
  }
  auto release = [&db] { (void)db.query("SELECT RELEASE_LOCK('portcullis.migrate')"); };

  auto applied_rows = db.query("SELECT version FROM schema_migrations");
  if (!applied_rows) {
    release();
    return applied_rows.status();
  }
  std::set<int64_t> applied;
  for (const Row& r : *applied_rows) applied.insert(r.i64(0));

  int count = 0;
  for (const Migration& m : migrations) {
    if (applied.count(m.version)) continue;
    log::info("applying migration", {{"version", m.version}, {"name", m.name}});
    Status st = db.execute_script(m.sql);
    if (st.is_ok()) {
      st = db.execute(
                 "INSERT INTO schema_migrations (version, name, applied_at) "
                 "VALUES (?, ?, UTC_TIMESTAMP(6))",
                 {int64_t{m.version}, m.name})
               .status();
    }
    if (!st.is_ok()) {
      release();
      return Status(st.code(), "migration " + std::to_string(m.version) + "_" + m.name +
                                   " failed: " + st.message());
    }
    ++count;
  }
  release();
  return count;
}

}  // namespace portcullis::store
