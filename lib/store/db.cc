#include "store/db.h"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <charconv>
#include <unordered_map>

#include "log/log.h"

namespace portcullis::store {
namespace {

sql::mysql::MySQL_Driver* g_driver = nullptr;

// Errors after which the connection (or its prepared statements) can no longer be trusted.
// 0 is Connector/C++'s own "connection has been closed".
bool is_connection_lost(int code) {
  switch (code) {
    case 0:
    case 2002:  // can't connect (local)
    case 2003:  // can't connect (tcp)
    case 2006:  // server has gone away
    case 2013:  // lost connection during query
    case 2055:  // lost connection (system error)
    case 1243:  // unknown prepared statement handler (server restarted)
    case 1927:  // connection was killed
    case 2030:  // statement not prepared
    case 4031:  // disconnected by the server for inactivity
    case 1053:  // server shutdown in progress
      return true;
    default:
      return false;
  }
}

// Errors that abort the transaction without any of its writes: safe to run it again.
bool is_transient_conflict(int code) {
  return code == 1213 /*deadlock*/ || code == 1205;
}

}  // namespace

Value nullable(const std::optional<std::string>& v) {
  if (!v) return nullptr;
  return *v;
}

const std::string& Row::str(size_t i) const {
  static const std::string kEmpty;
  const auto& cell = cells_.at(i);
  return cell ? *cell : kEmpty;
}

int64_t Row::i64(size_t i) const {
  const auto& cell = cells_.at(i);
  if (!cell) return 0;
  int64_t v = 0;
  std::from_chars(cell->data(), cell->data() + cell->size(), v);
  return v;
}

void init_driver() {
  if (!g_driver) g_driver = sql::mysql::get_mysql_driver_instance();
}

constexpr size_t kMaxCachedStatements = 1000;

struct Db::Impl {
  // Statements are declared after the connection so they are destroyed first.
  std::unique_ptr<sql::Connection> connection;
  std::unordered_map<std::string, std::unique_ptr<sql::PreparedStatement>> statements;
  std::unique_ptr<sql::Statement> control;  // START TRANSACTION, COMMIT, ROLLBACK

  ~Impl() {
    control.reset();
    statements.clear();
    connection.reset();
  }
};

Db::Db(config::DbConfig config) : config_(std::move(config)) {}
Db::~Db() = default;

void Db::disconnect() {
  if (!impl_) return;
  try {
    impl_.reset();
  } catch (const sql::SQLException&) {
    impl_.release();  // a half-dead connection may throw while closing; never let it escape
  }
}

Status Db::ensure_connected() {
  if (impl_) return Status::ok();
  init_driver();
  sql::ConnectOptionsMap options;
  if (!config_.socket.empty()) {
    options["hostName"] = sql::SQLString("unix://" + config_.socket);
  } else {
    options["hostName"] =
        sql::SQLString("tcp://" + config_.host + ":" + std::to_string(config_.port));
  }
  options["userName"] = sql::SQLString(config_.user);
  options["password"] = sql::SQLString(config_.password);
  options["schema"] = sql::SQLString(config_.name);
  options["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
  options["OPT_RECONNECT"] = false;
  // execute() reports rows changed, not rows matched (ratelimit/limiter.cc relies on it).
  options["CLIENT_FOUND_ROWS"] = false;
  options["OPT_CONNECT_TIMEOUT"] = config_.connect_timeout_seconds;
  options["OPT_READ_TIMEOUT"] = config_.read_timeout_seconds;
  options["OPT_WRITE_TIMEOUT"] = config_.write_timeout_seconds;
  try {
    auto impl = std::make_unique<Impl>();
    impl->connection.reset(g_driver->connect(options));
    // connect() forces REPEATABLE READ and leaves the connection collation at the server's
    // default: state both explicitly on every new connection.
    std::unique_ptr<sql::Statement> setup(impl->connection->createStatement());
    setup->execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    setup->execute("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
    setup->execute("SET SESSION time_zone = '+00:00'");
    setup->execute(
        "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,"
        "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'");
    setup.reset();
    impl_ = std::move(impl);
    ++connects_;
    return Status::ok();
  } catch (const sql::SQLException& e) {
    log::warn("database connect failed", {{"db_error", e.getErrorCode()}});
    return Status::unavailable("the database is unavailable").with_retry_after(1);
  }
}

Status Db::run(std::string_view sql_text, const Params& params, Rows* rows, uint64_t* affected) {
  PORTCULLIS_RETURN_IF_ERROR(ensure_connected());
  try {
    std::string key(sql_text);
    auto it = impl_->statements.find(key);
    if (it == impl_->statements.end()) {
      // Queries built from request input (SCIM filters: the shape varies, never the values)
      // could otherwise grow the cache, and the server's prepared statement count, without
      // bound.
      if (impl_->statements.size() >= kMaxCachedStatements) impl_->statements.clear();
      std::unique_ptr<sql::PreparedStatement> stmt(
          impl_->connection->prepareStatement(sql::SQLString(key)));
      it = impl_->statements.emplace(key, std::move(stmt)).first;
    }
    sql::PreparedStatement& stmt = *it->second;
    stmt.clearParameters();
    unsigned int index = 1;
    for (const Value& v : params) {
      if (std::holds_alternative<std::nullptr_t>(v)) {
        stmt.setNull(index, 0);
      } else if (const auto* i = std::get_if<int64_t>(&v)) {
        stmt.setInt64(index, *i);
      } else if (const auto* s = std::get_if<std::string>(&v)) {
        stmt.setString(index, sql::SQLString(*s));
      } else {
        stmt.setBoolean(index, std::get<bool>(v));
      }
      ++index;
    }
    if (rows) {
      // The result set is read whole and destroyed before the statement can run again: a live
      // result set is silently corrupted by re-executing its statement (cpp-stack §8.5).
      std::unique_ptr<sql::ResultSet> rs(stmt.executeQuery());
      unsigned int columns = rs->getMetaData()->getColumnCount();
      while (rs->next()) {
        std::vector<std::optional<std::string>> cells;
        cells.reserve(columns);
        for (unsigned int c = 1; c <= columns; ++c) {
          if (rs->isNull(c)) {
            cells.emplace_back(std::nullopt);
          } else {
            cells.emplace_back(std::string(rs->getString(c)));
          }
        }
        rows->emplace_back(std::move(cells));
      }
    } else {
      int n = stmt.executeUpdate();
      if (affected) *affected = static_cast<uint64_t>(n < 0 ? 0 : n);
    }
    return Status::ok();
  } catch (const sql::SQLException& e) {
    int code = e.getErrorCode();
    if (is_connection_lost(code)) {
      log::warn("database connection lost", {{"db_error", code}});
      disconnect();
      if (in_transaction_) transaction_broken_ = true;
      return Status::unavailable("the database is unavailable").with_retry_after(1);
    }
    if (is_transient_conflict(code)) {
      // Rolled back whole (inside a transaction: all of it, run again by transaction()). A
      // single statement, e.g. one that lost a Galera certification, is a 503 to retry.
      if (in_transaction_) transaction_broken_ = true;
      return Status::unavailable("transaction conflict").with_retry_after(1);
    }
    if (code == 1062) return Status::already_exists("duplicate key");
    log::error("database statement failed", {{"db_error", code}, {"sql_state", e.getSQLState()}});
    return Status::internal("database error");
  }
}

Result<Rows> Db::query(std::string_view sql_text, const Params& params) {
  for (int attempt = 0;; ++attempt) {
    Rows rows;
    Status st = run(sql_text, params, &rows, nullptr);
    if (st.is_ok()) return rows;
    // A read outside a transaction is safe to run again once on a fresh connection.
    if (attempt == 0 && !in_transaction_ && st.code() == Code::kUnavailable) continue;
    return st;
  }
}

Result<uint64_t> Db::execute(std::string_view sql_text, const Params& params) {
  uint64_t affected = 0;
  PORTCULLIS_RETURN_IF_ERROR(run(sql_text, params, nullptr, &affected));
  return affected;
}

Status Db::transaction(const std::function<Status()>& fn) {
  if (in_transaction_) return nested_transaction(fn);
  for (int attempt = 0;; ++attempt) {
    PORTCULLIS_RETURN_IF_ERROR(ensure_connected());
    in_transaction_ = true;
    transaction_broken_ = false;
    Status st;
    try {
      // START TRANSACTION/COMMIT rather than toggling autocommit: two round trips instead of
      // four, and the session stays in autocommit for every statement outside a transaction.
      control("START TRANSACTION");
      st = fn();
      if (st.is_ok() && !transaction_broken_) {
        control("COMMIT");
      } else if (impl_) {
        control("ROLLBACK");
      }
    } catch (const sql::SQLException& e) {
      // Failing inside COMMIT leaves the outcome unknown: never retry that (see header).
      log::warn("database transaction failed", {{"db_error", e.getErrorCode()}});
      in_transaction_ = false;
      disconnect();
      return Status::unavailable("the database is unavailable").with_retry_after(1);
    }
    bool retry = transaction_broken_ && attempt == 0;
    in_transaction_ = false;
    if (retry) continue;
    return st;
  }
}

Status Db::nested_transaction(const std::function<Status()>& fn) {
  // Static names by depth: savepoints are per connection, and only this class creates them.
  std::string name = "portcullis_nested_" + std::to_string(++nesting_);
  Status st;
  try {
    control(("SAVEPOINT " + name).c_str());
    st = fn();
    if (transaction_broken_) {
      // The whole outer transaction is lost; its owner rolls back (and may run it again).
    } else if (st.is_ok()) {
      control(("RELEASE SAVEPOINT " + name).c_str());
    } else {
      control(("ROLLBACK TO SAVEPOINT " + name).c_str());
    }
  } catch (const sql::SQLException& e) {
    log::warn("database savepoint failed", {{"db_error", e.getErrorCode()}});
    transaction_broken_ = true;
    st = Status::unavailable("the database is unavailable").with_retry_after(1);
  }
  --nesting_;
  return st;
}

void Db::control(const char* statement) {
  if (!impl_->control) impl_->control.reset(impl_->connection->createStatement());
  impl_->control->execute(statement);
}

Status Db::ping() {
  auto rows = query("SELECT 1");
  return rows.status();
}

Status Db::execute_script(std::string_view script) {
  PORTCULLIS_RETURN_IF_ERROR(ensure_connected());
  // Statements end with ";" at the end of a line; the migration files are written that way.
  std::string statement;
  size_t pos = 0;
  auto flush = [&]() -> Status {
    size_t first = statement.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) {
      statement.clear();
      return Status::ok();
    }
    try {
      std::unique_ptr<sql::Statement> stmt(impl_->connection->createStatement());
      stmt->execute(sql::SQLString(statement));
    } catch (const sql::SQLException& e) {
      std::string head = statement.substr(first, 80);
      statement.clear();
      return Status::internal("migration statement failed (" + std::to_string(e.getErrorCode()) +
                              " " + e.what() + ") near: " + head);
    }
    statement.clear();
    return Status::ok();
  };
  while (pos < script.size()) {
    size_t nl = script.find('\n', pos);
    if (nl == std::string_view::npos) nl = script.size();
    std::string_view line = script.substr(pos, nl - pos);
    pos = nl + 1;
    std::string_view trimmed = line;
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\r')) {
      trimmed.remove_suffix(1);
    }
    if (trimmed.rfind("--", 0) == 0) continue;
    statement.append(line);
    statement.push_back('\n');
    if (!trimmed.empty() && trimmed.back() == ';') PORTCULLIS_RETURN_IF_ERROR(flush());
  }
  return flush();
}

}  // namespace portcullis::store
