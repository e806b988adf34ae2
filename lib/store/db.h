// The store's one door to MySQL/MariaDB: one persistent connection per worker process, opened
// lazily after the fork, prepared statements only (cached per connection), READ COMMITTED, and
// reconnection in the application (Connector/C++'s OPT_RECONNECT silently kills prepared
// statements and session settings — docs/architecture.md, cpp-stack §8).
//
// Failure contract, which the http layer turns into 503 + Retry-After:
//  - query(): a read. If the connection turns out dead, reconnect and run it once more.
//  - execute(): a single autocommit write. Never retried when the connection died mid-flight
//    (its outcome is unknown): Unavailable. A deadlock (error 1213, which is also how Galera
//    reports a lost certification) rolled it back whole, so it is run again, up to 5 attempts
//    in all with a jittered exponential backoff (2 ms doubling, capped at 100 ms), then
//    Unavailable. A lock wait timeout (1205) is not retried: it already waited.
//  - transaction(): runs `fn` between BEGIN and COMMIT. A dead connection or a lock wait
//    timeout before COMMIT rolls everything back, so `fn` is run once more on a fresh
//    connection; a deadlock before or at COMMIT (Galera certifies at COMMIT) is run again up to
//    5 attempts in all, with the same backoff. `fn` must therefore have no effect outside the
//    transaction. Any other failure at COMMIT leaves the outcome unknown: Unavailable.
//    Called inside another transaction(), it joins it: `fn`'s writes are undone (to a
//    savepoint) when it fails, and otherwise commit or roll back with the outer transaction,
//    which is also what is retried. So a store method that needs its writes to be atomic can
//    use transaction() and still be composed into a larger one.
// Connector/C++ exceptions never cross this header: every method returns a Status.
//
// Several servers (a Galera cluster's nodes): DbConfig::host may list "host[:port]" entries
// separated by commas. A worker connects to one; when its connection is lost (or the node says
// it is not part of the primary component, 1047) it reconnects to the next one.
// Every connection sets wsrep_sync_wait = 1 (causal reads on Galera; ignored elsewhere).
//
// Not thread-safe: one Db per process (the workers are single-threaded).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config.h"
#include "core/status.h"

namespace portcullis::store {

// A bound parameter. Binary strings (hashes, sealed keys) travel as std::string too.
using Value = std::variant<std::nullptr_t, int64_t, std::string, bool>;
using Params = std::vector<Value>;

Value nullable(const std::optional<std::string>& v);

struct Endpoint {
  std::string host;
  int port = 3306;
};
// "db1, db2:3307, [2001:db8::1]:3306" → the endpoints in order; entries without a port get
// default_port, empty entries are skipped.
std::vector<Endpoint> parse_db_hosts(std::string_view hosts, int default_port);

class Row {
 public:
  explicit Row(std::vector<std::optional<std::string>> cells) : cells_(std::move(cells)) {}
  size_t size() const { return cells_.size(); }
  bool is_null(size_t i) const { return !cells_.at(i).has_value(); }
  // "" for NULL.
  const std::string& str(size_t i) const;
  std::optional<std::string> opt(size_t i) const { return cells_.at(i); }
  // 0 for NULL or a non-number.
  int64_t i64(size_t i) const;
  bool boolean(size_t i) const { return i64(i) != 0; }

 private:
  std::vector<std::optional<std::string>> cells_;
};
using Rows = std::vector<Row>;

// Call once in main(), before any fork: creating Connector/C++'s driver is not thread-safe and
// a connection must never cross a fork.
void init_driver();

class Db {
 public:
  explicit Db(config::DbConfig config);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  Result<Rows> query(std::string_view sql, const Params& params = {});
  // query(), on a statement prepared for this one execution and closed after it instead of one
  // kept prepared: one round trip more (the preparation). For a statement whose plan MariaDB
  // gets wrong when it executes a kept statement again: 10.11 then no longer sees that an index
  // holds every column the statement reads, so a keyset page (paging/keyset.cc) read through
  // `(type, occurred_at)` walks the type's index entries from the newest instead of reading
  // the page's range (bench/README.md, "The typed deep page").
  Result<Rows> query_once(std::string_view sql, const Params& params = {});
  // Rows changed: an UPDATE that matches a row but leaves it as it was counts 0, and an
  // INSERT … ON DUPLICATE KEY UPDATE counts 1 for an insert, 2 for a change, 0 for neither.
  Result<uint64_t> execute(std::string_view sql, const Params& params = {});
  Status transaction(const std::function<Status()>& fn);

  // Cheap liveness check for /readyz (reconnects if needed).
  Status ping();
  // Runs trusted, static SQL text (the embedded migrations) statement by statement.
  Status execute_script(std::string_view script);
  // Drops the connection (tests simulate a lost connection with it).
  void disconnect();

  // The number of times a new connection was opened (for tests and metrics).
  uint64_t connects() const { return connects_; }
  // The prepared statements the connection keeps (for tests).
  size_t prepared_statements() const;

 private:
  struct Impl;
  Status ensure_connected();
  Status run(std::string_view sql, const Params& params, Rows* rows, uint64_t* affected,
             bool keep = true);
  Result<Rows> read(std::string_view sql, const Params& params, bool keep);
  // Transaction control statements (static text). Throws sql::SQLException like the driver.
  void control(const char* statement);
  Status nested_transaction(const std::function<Status()>& fn);

  config::DbConfig config_;
  std::unique_ptr<Impl> impl_;
  bool in_transaction_ = false;
  bool transaction_broken_ = false;
  bool transaction_conflict_ = false;  // broken by a deadlock / certification failure
  bool last_conflict_ = false;         // the last statement failed with one
  size_t next_host_ = 0;               // index into the listed hosts to connect to first
  int nesting_ = 0;
  uint64_t connects_ = 0;
};

// Statements whose text follows a number of values (an IN list, a multi-row INSERT) are prepared
// once per text and kept in the connection's cache like any other. A store writing one text per
// count would keep a prepared statement for every count it ever met — the events batch alone, 1
// to 100 rows of 10 values, is 200 statements holding up to 1,000 parameter binds each, on the
// client and on the server — so a worker's memory would grow in steps whenever a load it had not
// seen produced a new count. Counts are therefore rounded to a few shapes, powers of two:
//
// The last `n` values of `params` (n > 0) are an IN list's: they are padded to the next power of
// two by repeating the last one (which changes nothing an IN list selects), and the list's
// placeholders "?, ?, …" are returned.
std::string in_list(Params& params, size_t n);
// The number of rows the next statement of a multi-row INSERT writes when `left` rows (> 0)
// remain: the largest power of two not over `left`. So n rows take one statement per bit of n.
size_t rows_per_statement(size_t left);
// Inserts `rows` rows (> 0) with one multi-row statement per rows_per_statement chunk, all in
// one transaction (joining the caller's): `head` is the statement up to and including VALUES,
// `row` one row's "(?, …)", and bind(i, params) appends row i's values.
Status insert_rows(Db& db, std::string_view head, std::string_view row, size_t rows,
                   const std::function<void(size_t, Params&)>& bind);

}  // namespace portcullis::store
