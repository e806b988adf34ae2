#define BOOST_TEST_MODULE store
#include <bit>
#include <boost/test/unit_test.hpp>
#include <chrono>

#include "core/ids.h"
#include "db_fixture.h"
#include "store/columns.h"
#include "store/db.h"
#include "store/migrate.h"

using namespace portcullis;

namespace {

void reset_table(store::Db& db) {
  BOOST_REQUIRE(db.execute_script("DROP TABLE IF EXISTS store_test;\n"
                                  "CREATE TABLE store_test (id VARCHAR(40) PRIMARY KEY, "
                                  "n BIGINT NULL, s VARCHAR(100) NULL, b VARBINARY(64) NULL) "
                                  "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;\n")
                    .is_ok());
}

int64_t count(store::Db& db) {
  return (*db.query("SELECT COUNT(*) FROM store_test"))[0].i64(0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(migrations_apply_once_and_are_recorded) {
  auto config = testing::test_config();
  store::Db db(config->db);
  auto first = store::migrate(db, store::embedded_migrations());
  BOOST_REQUIRE_MESSAGE(first.is_ok(), first.status().to_string());
  auto second = store::migrate(db, store::embedded_migrations());
  BOOST_REQUIRE(second.is_ok());
  BOOST_TEST(*second == 0);
  auto rows = db.query("SELECT COUNT(*) FROM schema_migrations");
  BOOST_TEST((*rows)[0].i64(0) == static_cast<int64_t>(store::embedded_migrations().size()));
}

BOOST_AUTO_TEST_CASE(prepared_statements_bind_every_type_and_nulls) {
  auto config = testing::test_config();
  store::Db db(config->db);
  reset_table(db);
  std::string binary("\x00\xff\x10 'quote\" \\", 12);
  std::string emoji = "caf\xc3\xa9 \xf0\x9f\x94\x91";
  BOOST_REQUIRE(db.execute("INSERT INTO store_test VALUES (?, ?, ?, ?)",
                           {std::string("a"), int64_t{-42}, emoji, binary})
                    .is_ok());
  BOOST_REQUIRE(db.execute("INSERT INTO store_test VALUES (?, ?, ?, ?)",
                           {std::string("b"), nullptr, nullptr, nullptr})
                    .is_ok());
  auto rows = db.query("SELECT id, n, s, b FROM store_test ORDER BY id");
  BOOST_REQUIRE(rows.is_ok());
  BOOST_REQUIRE(rows->size() == 2u);
  BOOST_TEST((*rows)[0].i64(1) == -42);
  BOOST_TEST((*rows)[0].str(2) == emoji);
  BOOST_TEST((*rows)[0].str(3) == binary);
  BOOST_TEST((*rows)[1].is_null(1));
  BOOST_TEST(!(*rows)[1].opt(2).has_value());
  // An injection attempt is only ever data.
  auto none = db.query("SELECT id FROM store_test WHERE id = ?", {std::string("a' OR '1'='1")});
  BOOST_TEST(none->empty());
  // Duplicate keys are AlreadyExists, not a generic failure.
  auto dup = db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("a")});
  BOOST_TEST(dup.status().code() == Code::kAlreadyExists);
}

// Statements whose text follows a count (IN lists, multi-row INSERTs) come in a few shapes, so a
// connection keeps a few prepared statements for them whatever counts it meets (store/db.h).
BOOST_AUTO_TEST_CASE(counts_of_values_share_a_few_statement_shapes) {
  auto config = testing::test_config();
  store::Db db(config->db);
  reset_table(db);
  BOOST_TEST(store::rows_per_statement(100) == 64u);
  BOOST_TEST(store::rows_per_statement(1) == 1u);
  BOOST_TEST(store::rows_per_statement(64) == 64u);
  const size_t before = db.prepared_statements();
  // Every count from 1 to 100 rows: the rows are all there, written in 7 shapes (1 … 64 rows).
  size_t written = 0;
  for (size_t rows = 1; rows <= 100; ++rows) {
    BOOST_REQUIRE(store::insert_rows(db, "INSERT INTO store_test (id, n) VALUES ", "(?, ?)", rows,
                                     [&](size_t i, store::Params& params) {
                                       params.emplace_back("r" + std::to_string(written + i));
                                       params.emplace_back(static_cast<int64_t>(i));
                                     })
                      .is_ok());
    written += rows;
  }
  BOOST_TEST(db.prepared_statements() - before == 7u);
  BOOST_TEST(count(db) == static_cast<int64_t>(written));
  // An IN list of 1 to 100 values selects exactly its values, in 8 shapes (1 … 128).
  const size_t shapes = db.prepared_statements();
  for (size_t n = 1; n <= 100; ++n) {
    store::Params params{int64_t{0}};
    for (size_t i = 0; i < n; ++i) params.emplace_back("r" + std::to_string(i));
    const std::string list = store::in_list(params, n);
    BOOST_TEST(params.size() == 1 + std::bit_ceil(n));
    auto rows =
        db.query("SELECT COUNT(*) FROM store_test WHERE n >= ? AND id IN (" + list + ")", params);
    BOOST_REQUIRE(rows.is_ok());
    BOOST_TEST((*rows)[0].i64(0) == static_cast<int64_t>(n));
  }
  BOOST_TEST(db.prepared_statements() - shapes == 8u);
}

BOOST_AUTO_TEST_CASE(transactions_commit_or_roll_back_whole) {
  auto config = testing::test_config();
  store::Db db(config->db);
  reset_table(db);
  Status failed = db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(
        db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("x")}).status());
    return Status::invalid_argument("changed my mind");
  });
  BOOST_TEST(failed.code() == Code::kInvalidArgument);
  BOOST_TEST(count(db) == 0);
  Status ok = db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(
        db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("x")}).status());
    return db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("y")}).status();
  });
  BOOST_TEST(ok.is_ok());
  BOOST_TEST(count(db) == 2);
}

BOOST_AUTO_TEST_CASE(a_nested_transaction_joins_the_outer_one) {
  auto config = testing::test_config();
  store::Db db(config->db);
  reset_table(db);
  auto insert = [&](const char* id) {
    return db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string(id)}).status();
  };
  Status ok = db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(insert("a"));
    // A failed inner transaction undoes only its own writes; the outer one goes on.
    Status inner = db.transaction([&]() -> Status {
      PORTCULLIS_RETURN_IF_ERROR(insert("b"));
      return Status::invalid_argument("inner changed its mind");
    });
    BOOST_TEST(inner.code() == Code::kInvalidArgument);
    return db.transaction([&]() -> Status { return insert("c"); });
  });
  BOOST_TEST(ok.is_ok());
  BOOST_TEST(count(db) == 2);  // a and c
  // The outer failure takes a committed-looking inner transaction with it.
  reset_table(db);
  Status failed = db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(db.transaction([&]() -> Status { return insert("d"); }));
    return Status::invalid_argument("outer changed its mind");
  });
  BOOST_TEST(failed.code() == Code::kInvalidArgument);
  BOOST_TEST(count(db) == 0);
}

BOOST_AUTO_TEST_CASE(a_killed_connection_is_replaced_and_statements_reprepared) {
  auto config = testing::test_config();
  store::Db db(config->db);
  store::Db admin(config->db);
  reset_table(db);
  auto kill_db_connection = [&] {
    auto id = db.query("SELECT CONNECTION_ID()");
    BOOST_REQUIRE(id.is_ok());
    BOOST_REQUIRE(admin.execute("KILL ?", {(*id)[0].i64(0)}).is_ok());
  };

  // A read is retried once on a fresh connection: the caller never sees the loss.
  kill_db_connection();
  uint64_t before = db.connects();
  auto rows = db.query("SELECT COUNT(*) FROM store_test");
  BOOST_REQUIRE_MESSAGE(rows.is_ok(), rows.status().to_string());
  BOOST_TEST(db.connects() == before + 1);

  // A single write is never retried (its outcome would be unknown): Unavailable, then fine.
  kill_db_connection();
  auto write = db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("w1")});
  BOOST_TEST(write.status().code() == Code::kUnavailable);
  BOOST_TEST(write.status().retry_after() > 0);
  BOOST_TEST(db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("w2")}).is_ok());

  // A transaction that loses its connection before COMMIT is run again, whole.
  int runs = 0;
  Status st = db.transaction([&]() -> Status {
    ++runs;
    PORTCULLIS_RETURN_IF_ERROR(
        db.execute("INSERT INTO store_test (id) VALUES (?)", {"t" + std::to_string(runs)})
            .status());
    if (runs == 1) kill_db_connection();
    return db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("t-second")}).status();
  });
  BOOST_REQUIRE_MESSAGE(st.is_ok(), st.to_string());
  BOOST_TEST(runs == 2);
  auto ids = db.query("SELECT id FROM store_test WHERE id LIKE 't%' ORDER BY id");
  BOOST_REQUIRE(ids->size() == 2u);  // t1 was rolled back with the lost connection
  BOOST_TEST((*ids)[0].str(0) == "t-second");
  BOOST_TEST((*ids)[1].str(0) == "t2");
}

namespace {

// A trigger that fails the next `n` inserts into store_test with a deadlock (1213, which is
// also how Galera reports a lost certification). Its budget lives in an Aria table, which a
// rollback does not undo.
void arm_deadlocks(store::Db& db, int n) {
  BOOST_REQUIRE(
      db.execute_script("DROP TRIGGER IF EXISTS store_test_deadlock;\n"
                        "DROP TABLE IF EXISTS store_test_budget;\n"
                        "CREATE TABLE store_test_budget (id INT PRIMARY KEY, n INT) ENGINE=Aria;\n")
          .is_ok());
  BOOST_REQUIRE(db.execute("INSERT INTO store_test_budget VALUES (1, ?)", {int64_t{n}}).is_ok());
  BOOST_REQUIRE(db.execute_script(
                      "CREATE TRIGGER store_test_deadlock BEFORE INSERT ON store_test FOR EACH ROW "
                      "BEGIN IF (SELECT n FROM store_test_budget WHERE id = 1) > 0 THEN "
                      "UPDATE store_test_budget SET n = n - 1 WHERE id = 1; "
                      "SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = "
                      "'Deadlock found when trying to get lock (test)'; END IF; END;\n")
                    .is_ok());
}

int64_t deadlocks_left(store::Db& db) {
  return (*db.query("SELECT n FROM store_test_budget WHERE id = 1"))[0].i64(0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(deadlocks_and_certification_failures_are_retried_with_backoff) {
  auto config = testing::test_config();
  store::Db db(config->db);
  reset_table(db);

  // A single write that deadlocked was rolled back whole: it is run again.
  arm_deadlocks(db, 2);
  auto started = std::chrono::steady_clock::now();
  auto write = db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("d1")});
  BOOST_REQUIRE_MESSAGE(write.is_ok(), write.status().to_string());
  BOOST_TEST(deadlocks_left(db) == 0);
  BOOST_TEST(count(db) == 1);

  // A transaction is run again whole, as often as the budget allows.
  arm_deadlocks(db, 3);
  int runs = 0;
  Status st = db.transaction([&]() -> Status {
    ++runs;
    PORTCULLIS_RETURN_IF_ERROR(
        db.execute("UPDATE store_test SET n = ? WHERE id = 'd1'", {int64_t{runs}}).status());
    return db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("d2")}).status();
  });
  BOOST_REQUIRE_MESSAGE(st.is_ok(), st.to_string());
  BOOST_TEST(runs == 4);
  BOOST_TEST(count(db) == 2);
  BOOST_TEST((*db.query("SELECT n FROM store_test WHERE id = 'd1'"))[0].i64(0) == 4);

  // A conflict that never clears gives up after 5 attempts in all: Unavailable, to retry later.
  arm_deadlocks(db, 100);
  write = db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("d3")});
  BOOST_TEST(write.status().code() == Code::kUnavailable);
  BOOST_TEST(deadlocks_left(db) == 95);
  runs = 0;
  st = db.transaction([&]() -> Status {
    ++runs;
    return db.execute("INSERT INTO store_test (id) VALUES (?)", {std::string("d4")}).status();
  });
  BOOST_TEST(st.code() == Code::kUnavailable);
  BOOST_TEST(runs == 5);
  BOOST_TEST(count(db) == 2);
  // Backoff: at most 2+4+8+16 ms between the attempts of each call, never a long stall.
  BOOST_TEST((std::chrono::steady_clock::now() - started < std::chrono::seconds(5)));
  BOOST_REQUIRE(db.execute_script("DROP TRIGGER store_test_deadlock;\n").is_ok());
}

BOOST_AUTO_TEST_CASE(database_hosts_list_every_galera_node) {
  auto hosts =
      store::parse_db_hosts(" db1, db2:3307 ,,[2001:db8::1]:3308, [::1], ::1, 127.0.0.1:x", 3306);
  BOOST_REQUIRE(hosts.size() == 6u);
  BOOST_TEST(hosts[0].host == "db1");
  BOOST_TEST(hosts[0].port == 3306);
  BOOST_TEST(hosts[1].host == "db2");
  BOOST_TEST(hosts[1].port == 3307);
  BOOST_TEST(hosts[2].host == "2001:db8::1");
  BOOST_TEST(hosts[2].port == 3308);
  BOOST_TEST(hosts[3].host == "::1");
  BOOST_TEST(hosts[3].port == 3306);
  BOOST_TEST(hosts[4].host == "::1");
  BOOST_TEST(hosts[5].host == "127.0.0.1");
  BOOST_TEST(hosts[5].port == 3306);  // not a port: the default
  BOOST_TEST(store::parse_db_hosts("", 3306).empty());
}

BOOST_AUTO_TEST_CASE(a_column_list_qualified_by_an_alias_reads_the_same_columns_in_a_join) {
  BOOST_TEST(store::qualified_columns("t", "id, n,s") == "t.id, t.n, t.s");
  BOOST_TEST(store::qualified_columns("t", "").empty());
  auto config = testing::test_config();
  store::Db db(config->db);
  reset_table(db);
  BOOST_REQUIRE(db.execute("INSERT INTO store_test (id, n, s) VALUES ('a', 7, 'x')").is_ok());
  // Joined to a second copy of the table, only the alias says whose columns are read.
  auto rows =
      db.query("SELECT " + store::qualified_columns("t", "id, n, s") +
                   " FROM store_test t LEFT JOIN store_test o ON o.id = 'none' WHERE t.id = ?",
               {std::string("a")});
  BOOST_REQUIRE(rows.is_ok());
  BOOST_REQUIRE(rows->size() == 1u);
  BOOST_TEST((*rows)[0].str(0) == "a");
  BOOST_TEST((*rows)[0].i64(1) == 7);
  BOOST_TEST((*rows)[0].str(2) == "x");
}

BOOST_AUTO_TEST_CASE(a_listed_host_that_is_down_is_skipped) {
  // Nothing listens on port 1; the second entry is just as unreachable, so the error is the
  // ordinary Unavailable after trying both (a reachable second node is run-cluster's test).
  config::DbConfig two;
  two.host = "127.0.0.1:1, 127.0.0.1:2";
  two.connect_timeout_seconds = 1;
  store::Db db(two);
  BOOST_TEST(db.query("SELECT 1").status().code() == Code::kUnavailable);
  BOOST_TEST(db.connects() == 0u);
}

BOOST_AUTO_TEST_CASE(an_unreachable_server_is_unavailable_not_a_crash) {
  config::DbConfig nowhere;
  nowhere.socket = "/nonexistent/mysqld.sock";
  nowhere.connect_timeout_seconds = 1;
  store::Db db(nowhere);
  auto rows = db.query("SELECT 1");
  BOOST_TEST(rows.status().code() == Code::kUnavailable);
  BOOST_TEST(db.ping().code() == Code::kUnavailable);
  BOOST_TEST(db.transaction([] { return Status::ok(); }).code() == Code::kUnavailable);
}

BOOST_AUTO_TEST_CASE(ids_are_prefixed_sortable_ulids) {
  std::string a = new_id_at("usr_", 1'700'000'000'000ULL);
  std::string b = new_id_at("usr_", 1'700'000'000'001ULL);
  BOOST_TEST(a.size() == 30u);
  BOOST_TEST(is_valid_id(a, "usr_"));
  BOOST_TEST(!is_valid_id(a, "org_"));
  BOOST_TEST(a < b);
  BOOST_TEST(new_id("usr_") != new_id("usr_"));
  BOOST_TEST(!is_valid_id("usr_01ARZ3NDEKTSV4RRFFQ69G5FAV", "usr_"));  // upper case
  BOOST_TEST(!is_valid_id("usr_8zzzzzzzzzzzzzzzzzzzzzzzzz", "usr_"));  // 129 bits
  // The ULID spec's example timestamp encodes to the spec's time prefix.
  BOOST_TEST(new_id_at("", 1469918176385ULL).substr(0, 10) == "01aryz6s41");
}
