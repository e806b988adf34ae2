#include "store/db.h"

#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <bit>
#include <charconv>
#include <chrono>
#include <thread>
#include <unordered_map>

#include "core/telemetry.h"
#include "crypto/random.h"
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
    case 1047:  // WSREP has not yet prepared node for application use (Galera non-primary)
    case 1317:  // query execution was interrupted (the node is leaving the cluster)
      return true;
    default:
      return false;
  }
}

// Errors that abort the transaction without any of its writes: safe to run it again. Galera
// reports a lost certification (another node committed a conflicting write first) and a
// brute-force abort by a replicated write as a deadlock, 1213 (wsrep_debug shows which).
bool is_transient_conflict(int code) {
  return code == 1213 /*deadlock*/ || code == 1205;
}

// How often a conflict is tried again (attempts in all), and the backoff between attempts:
// "full jitter" (a random wait between 0 and min(cap, base * 2^attempt)), so writers that
// collided do not collide again in lockstep.
constexpr int kConflictAttempts = 5;
constexpr int kBackoffBaseMicros = 2000;
constexpr int kBackoffCapMicros = 100000;

void backoff(int attempt) {
  int64_t ceiling = std::min<int64_t>(kBackoffCapMicros, int64_t{kBackoffBaseMicros} << attempt);
  uint64_t r = 0;
  for (char c : crypto::random_bytes(4)) r = (r << 8) | static_cast<unsigned char>(c);
  std::this_thread::sleep_for(
      std::chrono::microseconds(static_cast<int64_t>(r % static_cast<uint64_t>(ceiling + 1))));
}

}  // namespace

// "host", "host:port", "[v6]" or "[v6]:port"; PORTCULLIS_DB_HOST may list several, separated
// by commas (Galera: every node, tried in turn).
std::vector<Endpoint> parse_db_hosts(std::string_view hosts, int default_port) {
  std::vector<Endpoint> out;
  auto parse_port = [](std::string_view text, int fallback) {
    int port = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (ec != std::errc() || ptr != text.data() + text.size() || port <= 0 || port > 65535) {
      return fallback;
    }
    return port;
  };
  size_t start = 0;
  while (start < hosts.size()) {
    size_t comma = hosts.find(',', start);
    if (comma == std::string_view::npos) comma = hosts.size();
    std::string_view entry = hosts.substr(start, comma - start);
    start = comma + 1;
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (entry.empty()) continue;
    if (entry.front() == '[') {
      size_t close = entry.find(']');
      if (close == std::string_view::npos) continue;
      std::string_view rest = entry.substr(close + 1);
      int port = rest.size() > 1 && rest.front() == ':' ? parse_port(rest.substr(1), default_port)
                                                        : default_port;
      out.push_back({std::string(entry.substr(1, close - 1)), port});
    } else if (size_t colon = entry.find(':');
               colon != std::string_view::npos &&
               entry.find(':', colon + 1) == std::string_view::npos) {
      out.push_back(
          {std::string(entry.substr(0, colon)), parse_port(entry.substr(colon + 1), default_port)});
    } else {
      out.push_back({std::string(entry), default_port});  // a name, or a bare IPv6 address
    }
  }
  return out;
}

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

// The hash of a statement's text, for lookups by std::string_view as well as std::string.
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

struct Db::Impl {
  // Statements are declared after the connection so they are destroyed first.
  std::unique_ptr<sql::Connection> connection;
  // Looked up by the statement's text as the caller holds it (no copy of the text per run).
  std::unordered_map<std::string, std::unique_ptr<sql::PreparedStatement>, TextHash,
                     std::equal_to<>>
      statements;
  std::unique_ptr<sql::Statement> control;  // START TRANSACTION, COMMIT, ROLLBACK

  ~Impl() {
    control.reset();
    statements.clear();
    connection.reset();
  }
};

Db::Db(config::DbConfig config) : config_(std::move(config)) {}
Db::~Db() = default;

size_t Db::prepared_statements() const {
  return impl_ ? impl_->statements.size() : 0;
}

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
  std::vector<Endpoint> endpoints;
  if (config_.socket.empty()) endpoints = parse_db_hosts(config_.host, config_.port);
  // One socket, or each listed host once, starting with the one that worked last (after a
  // lost connection, with the next one: the node we lost may be the one that failed).
  size_t tries = config_.socket.empty() ? std::max<size_t>(endpoints.size(), 1) : 1;
  int last_error = 0;
  for (size_t t = 0; t < tries; ++t) {
    sql::ConnectOptionsMap options;
    std::string where;
    if (!config_.socket.empty()) {
      where = "unix://" + config_.socket;
    } else if (endpoints.empty()) {
      where = "tcp://" + config_.host + ":" + std::to_string(config_.port);
    } else {
      const Endpoint& e = endpoints[(next_host_ + t) % endpoints.size()];
      bool v6 = e.host.find(':') != std::string::npos;
      where = "tcp://" + (v6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
    }
    options["hostName"] = sql::SQLString(where);
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
    auto started = std::chrono::steady_clock::now();
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
      // On a Galera node, reads wait until the node has applied every write the cluster had
      // committed when they started (causal reads): a write answered by one node is seen by
      // the next request, whichever node serves it. Elsewhere the variable is unknown (MySQL)
      // or has no effect (MariaDB without wsrep).
      try {
        setup->execute("SET SESSION wsrep_sync_wait = 1");
      } catch (const sql::SQLException&) {
      }
      setup.reset();
      impl_ = std::move(impl);
      ++connects_;
      if (!endpoints.empty()) next_host_ = (next_host_ + t) % endpoints.size();
      telemetry::count(telemetry::Counter::kDbConnects);
      telemetry::add_micros(telemetry::Counter::kDbConnectMicros, started);
      return Status::ok();
    } catch (const sql::SQLException& e) {
      last_error = e.getErrorCode();
      telemetry::count(telemetry::Counter::kDbConnectFailures);
      telemetry::add_micros(telemetry::Counter::kDbConnectMicros, started);
    }
  }
  log::warn("database connect failed", {{"db_error", last_error}});
  return Status::unavailable("the database is unavailable").with_retry_after(1);
}

Status Db::run(std::string_view sql_text, const Params& params, Rows* rows, uint64_t* affected,
               bool keep) {
  last_conflict_ = false;
  PORTCULLIS_RETURN_IF_ERROR(ensure_connected());
  try {
    std::unique_ptr<sql::PreparedStatement> once;  // closed when run() returns
    sql::PreparedStatement* prepared = nullptr;
    if (!keep) {
      once.reset(impl_->connection->prepareStatement(sql::SQLString(std::string(sql_text))));
      prepared = once.get();
    } else if (auto it = impl_->statements.find(sql_text); it != impl_->statements.end()) {
      prepared = it->second.get();
    } else {
      // Queries built from request input (SCIM filters: the shape varies, never the values)
      // could otherwise grow the cache, and the server's prepared statement count, without
      // bound.
      if (impl_->statements.size() >= kMaxCachedStatements) impl_->statements.clear();
      std::string key(sql_text);
      std::unique_ptr<sql::PreparedStatement> stmt(
          impl_->connection->prepareStatement(sql::SQLString(key)));
      prepared = impl_->statements.emplace(std::move(key), std::move(stmt)).first->second.get();
    }
    sql::PreparedStatement& stmt = *prepared;
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
      telemetry::count(telemetry::Counter::kDbConnectionsLost);
      disconnect();
      ++next_host_;  // reconnect to another node first, when several are listed
      if (in_transaction_) transaction_broken_ = true;
      return Status::unavailable("the database is unavailable").with_retry_after(1);
    }
    if (is_transient_conflict(code)) {
      // Rolled back whole (inside a transaction: all of it, run again by transaction()). A
      // single statement, e.g. one that lost a Galera certification, is a 503 to retry.
      if (in_transaction_) transaction_broken_ = true;
      last_conflict_ = true;
      if (in_transaction_) transaction_conflict_ = true;
      telemetry::count(telemetry::Counter::kDbConflicts);
      return Status::unavailable("transaction conflict").with_retry_after(1);
    }
    if (code == 1062) return Status::already_exists("duplicate key");
    log::error("database statement failed", {{"db_error", code}, {"sql_state", e.getSQLState()}});
    return Status::internal("database error");
  }
}

Result<Rows> Db::query(std::string_view sql_text, const Params& params) {
  return read(sql_text, params, true);
}

Result<Rows> Db::query_once(std::string_view sql_text, const Params& params) {
  return read(sql_text, params, false);
}

Result<Rows> Db::read(std::string_view sql_text, const Params& params, bool keep) {
  for (int attempt = 0;; ++attempt) {
    Rows rows;
    Status st = run(sql_text, params, &rows, nullptr, keep);
    if (st.is_ok()) return rows;
    // A read outside a transaction is safe to run again once on a fresh connection.
    if (attempt == 0 && !in_transaction_ && st.code() == Code::kUnavailable) continue;
    return st;
  }
}

Result<uint64_t> Db::execute(std::string_view sql_text, const Params& params) {
  for (int attempt = 0;; ++attempt) {
    uint64_t affected = 0;
    Status st = run(sql_text, params, nullptr, &affected);
    if (st.is_ok()) return affected;
    // A deadlock or a lost certification rolled the statement back whole: outside a transaction
    // it is safe to run again (a lost connection is not: the write may have happened).
    if (!in_transaction_ && last_conflict_ && attempt + 1 < kConflictAttempts) {
      telemetry::count(telemetry::Counter::kDbConflictRetries);
      backoff(attempt);
      continue;
    }
    return st;
  }
}

Status Db::transaction(const std::function<Status()>& fn) {
  if (in_transaction_) return nested_transaction(fn);
  // A lost connection is run again once (on a fresh connection); a conflict (deadlock, Galera
  // certification failure) up to kConflictAttempts in all, with a jittered backoff between.
  int lost_retries = 0;
  for (int attempt = 0;; ++attempt) {
    PORTCULLIS_RETURN_IF_ERROR(ensure_connected());
    in_transaction_ = true;
    transaction_broken_ = false;
    transaction_conflict_ = false;
    bool conflict = false;
    Status st;
    try {
      // START TRANSACTION/COMMIT rather than toggling autocommit: two round trips instead of
      // four, and the session stays in autocommit for every statement outside a transaction.
      control("START TRANSACTION");
      st = fn();
      conflict = transaction_conflict_;
      if (st.is_ok() && !transaction_broken_) {
        control("COMMIT");
      } else if (impl_) {
        control("ROLLBACK");
      }
    } catch (const sql::SQLException& e) {
      in_transaction_ = false;
      int code = e.getErrorCode();
      if (is_transient_conflict(code) && impl_) {
        // Galera certifies at COMMIT: a conflict there means nothing was written, so the
        // transaction can run again like any other deadlock. The session is still usable.
        telemetry::count(telemetry::Counter::kDbConflicts);
        if (attempt + 1 < kConflictAttempts) {
          telemetry::count(telemetry::Counter::kDbConflictRetries);
          backoff(attempt);
          continue;
        }
        return Status::unavailable("transaction conflict").with_retry_after(1);
      }
      // Any other failure inside COMMIT leaves the outcome unknown: never retry that (header).
      log::warn("database transaction failed", {{"db_error", code}});
      telemetry::count(telemetry::Counter::kDbConnectionsLost);
      disconnect();
      return Status::unavailable("the database is unavailable").with_retry_after(1);
    }
    in_transaction_ = false;
    if (transaction_broken_) {
      if (conflict && attempt + 1 < kConflictAttempts) {
        telemetry::count(telemetry::Counter::kDbConflictRetries);
        backoff(attempt);
        continue;
      }
      if (!conflict && lost_retries++ == 0) continue;
    }
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
  // Statements end with ";" at the end of a line; the migration files are written that way. A
  // line "DELIMITER $$" makes "$$" the end instead (as the mysql client does), so a stored
  // procedure's body can hold ";" at the end of its lines; "DELIMITER ;" sets it back.
  std::string statement;
  std::string delimiter = ";";
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
    if (trimmed.rfind("DELIMITER ", 0) == 0) {
      PORTCULLIS_RETURN_IF_ERROR(flush());
      delimiter = std::string(trimmed.substr(10));
      continue;
    }
    if (trimmed.size() >= delimiter.size() &&
        trimmed.compare(trimmed.size() - delimiter.size(), delimiter.size(), delimiter) == 0) {
      statement.append(trimmed.substr(0, trimmed.size() - delimiter.size()));
      statement.push_back(delimiter == ";" ? ';' : '\n');
      PORTCULLIS_RETURN_IF_ERROR(flush());
      continue;
    }
    statement.append(line);
    statement.push_back('\n');
  }
  return flush();
}

std::string in_list(Params& params, size_t n) {
  const size_t shape = n > 0 ? std::bit_ceil(n) : 0;
  if (n > 0) params.resize(params.size() + (shape - n), Value(params.back()));
  std::string out;
  for (size_t i = 0; i < shape; ++i) out += i ? ", ?" : "?";
  return out;
}

size_t rows_per_statement(size_t left) {
  return left > 0 ? std::bit_floor(left) : 0;
}

Status insert_rows(Db& db, std::string_view head, std::string_view row, size_t rows,
                   const std::function<void(size_t, Params&)>& bind) {
  return db.transaction([&]() -> Status {
    for (size_t begin = 0, n = 0; begin < rows; begin += n) {
      n = rows_per_statement(rows - begin);
      std::string sql(head);
      Params params;
      for (size_t i = 0; i < n; ++i) {
        if (i) sql += ", ";
        sql += row;
        bind(begin + i, params);
      }
      PORTCULLIS_RETURN_IF_ERROR(db.execute(sql, params).status());
    }
    return Status::ok();
  });
}

}  // namespace portcullis::store
