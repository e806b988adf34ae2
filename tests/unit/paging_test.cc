#define BOOST_TEST_MODULE paging
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "crypto/base64.h"
#include "db_fixture.h"
#include "paging/keyset.h"
#include "paging/page_token.h"

using namespace portcullis;
using namespace portcullis::paging;

namespace {

const std::string kKey(32, 'k');

TokenCodec codec_for(std::string name, std::string filter = "") {
  return TokenCodec(kKey, Listing{std::move(name), std::move(filter)});
}

PageToken sample(Direction d = Direction::kForward) {
  return PageToken{d, Position{"2026-11-21 10:00:00.123456", "res_01jd3k0000000000000000000a"}};
}

http::Form query(std::vector<std::pair<std::string, std::string>> params) {
  return http::Form(std::move(params));
}

}  // namespace

BOOST_AUTO_TEST_CASE(tokens_round_trip_with_their_direction) {
  TokenCodec codec = codec_for("resources");
  for (Direction d : {Direction::kForward, Direction::kBackward}) {
    auto decoded = codec.decode(codec.encode(sample(d)));
    BOOST_REQUIRE(decoded.is_ok());
    BOOST_TEST((decoded->direction == d));
    BOOST_TEST(decoded->position.create_time == sample().position.create_time);
    BOOST_TEST(decoded->position.id == sample().position.id);
  }
  // URL-safe: it travels in a query string untouched.
  for (char c : codec.encode(sample())) {
    BOOST_TEST((std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'));
  }
}

BOOST_AUTO_TEST_CASE(every_edited_byte_is_refused) {
  TokenCodec codec = codec_for("resources");
  std::string raw = *crypto::base64url_decode(codec.encode(sample()));
  for (size_t i = 0; i < raw.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string edited = raw;
      edited[i] = static_cast<char>(edited[i] ^ (1 << bit));
      auto r = codec.decode(crypto::base64url_encode(edited));
      BOOST_TEST(r.status().code() == Code::kInvalidArgument, "byte " << i << " bit " << bit);
    }
  }
  // Truncated, extended, and the direction flipped with the rest kept.
  BOOST_TEST(!codec.decode(crypto::base64url_encode(raw.substr(0, raw.size() - 1))).is_ok());
  BOOST_TEST(!codec.decode(crypto::base64url_encode(raw + "x")).is_ok());
  std::string flipped = raw;
  flipped[1] = 'b';
  BOOST_TEST(!codec.decode(crypto::base64url_encode(flipped)).is_ok());
}

BOOST_AUTO_TEST_CASE(tokens_are_bound_to_their_listing_and_key) {
  std::string token = codec_for("resources").encode(sample());
  BOOST_TEST(!codec_for("users").decode(token).is_ok());
  BOOST_TEST(!codec_for("resources", "x").decode(token).is_ok());
  std::string org_a = codec_for("org_users", "org_a").encode(sample());
  BOOST_TEST(codec_for("org_users", "org_a").decode(org_a).is_ok());
  BOOST_TEST(!codec_for("org_users", "org_b").decode(org_a).is_ok());
  // Name and filter cannot trade characters.
  BOOST_TEST(
      !codec_for("org_users", "").decode(codec_for("org_user", "s").encode(sample())).is_ok());
  TokenCodec other_key(std::string(32, 'o'), Listing{"resources", ""});
  BOOST_TEST(!other_key.decode(token).is_ok());
}

BOOST_AUTO_TEST_CASE(garbage_is_refused) {
  TokenCodec codec = codec_for("resources");
  for (const std::string& bad :
       std::vector<std::string>{"x", "====", "not a token", "AAAA", std::string(300, 'A')}) {
    BOOST_TEST(codec.decode(bad).status().code() == Code::kInvalidArgument, bad);
  }
}

BOOST_AUTO_TEST_CASE(page_size_is_an_integer_from_1_to_100) {
  TokenCodec codec = codec_for("resources");
  BOOST_TEST(parse_page_request(query({}), codec)->page_size == 50);
  BOOST_TEST(parse_page_request(query({{"page_size", "1"}}), codec)->page_size == 1);
  BOOST_TEST(parse_page_request(query({{"page_size", "100"}}), codec)->page_size == 100);
  for (const char* bad : {"", "0", "101", "-1", "+5", " 5", "5 ", "1e1", "ten", "99999999999"}) {
    auto r = parse_page_request(query({{"page_size", bad}}), codec);
    BOOST_TEST(r.status().code() == Code::kInvalidArgument, bad);
  }
  BOOST_TEST(!parse_page_request(query({{"page_size", "5"}, {"page_size", "5"}}), codec).is_ok());
}

BOOST_AUTO_TEST_CASE(page_token_empty_is_the_first_page) {
  TokenCodec codec = codec_for("resources");
  auto first = parse_page_request(query({{"page_token", ""}}), codec);
  BOOST_REQUIRE(first.is_ok());
  BOOST_TEST(!first->token.has_value());
  auto next = parse_page_request(query({{"page_token", codec.encode(sample())}}), codec);
  BOOST_REQUIRE(next.is_ok());
  BOOST_TEST(next->token.has_value());
  auto foreign =
      parse_page_request(query({{"page_token", codec_for("users").encode(sample())}}), codec);
  BOOST_TEST(foreign.status().code() == Code::kInvalidArgument);
}

// ------------------------------------------------------------------------ against MariaDB

namespace {

std::vector<std::string> ids(const Page<store::Row>& page) {
  std::vector<std::string> out;
  for (const auto& r : page.items) out.push_back(r.str(0));
  return out;
}

Page<store::Row> fetch(store::Db& db, const KeysetQuery& q, const TokenCodec& codec, int size,
                       const std::string& token) {
  auto request = parse_page_request(
      query({{"page_size", std::to_string(size)}, {"page_token", token}}), codec);
  BOOST_REQUIRE(request.is_ok());
  auto page = fetch_page(db, q, *request, codec);
  BOOST_REQUIRE_MESSAGE(page.is_ok(), page.status().to_string());
  return *page;
}

}  // namespace

BOOST_AUTO_TEST_CASE(walks_forward_and_back_in_keyset_order) {
  auto config = testing::test_config();
  store::Db db(config->db);
  BOOST_REQUIRE(db.execute("CREATE TABLE IF NOT EXISTS paging_test_items ("
                           "id VARCHAR(40) NOT NULL COLLATE utf8mb4_bin, grp VARCHAR(10) NOT NULL,"
                           "create_time DATETIME(6) NOT NULL, PRIMARY KEY (id),"
                           "KEY (grp, create_time, id)) ENGINE=InnoDB")
                    .is_ok());
  BOOST_REQUIRE(db.execute("DELETE FROM paging_test_items").is_ok());
  // Five rows in group a — two share a creation time, so the id breaks the tie — and one in
  // group b that a filtered listing must never show.
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"a1", "2026-01-01 00:00:01.000000"},
      {"a3", "2026-01-01 00:00:02.000000"},
      {"a2", "2026-01-01 00:00:02.000000"},
      {"a4", "2026-01-01 00:00:03.500000"},
      {"a5", "2026-01-01 00:00:04.000000"}};
  for (const auto& [id, t] : rows) {
    BOOST_REQUIRE(db.execute("INSERT INTO paging_test_items VALUES (?, 'a', ?)", {id, t}).is_ok());
  }
  BOOST_REQUIRE(db.execute("INSERT INTO paging_test_items VALUES ('b1', 'b', "
                           "'2026-01-01 00:00:02.500000')")
                    .is_ok());
  KeysetQuery q{.columns = "id", .from = "paging_test_items", .where = "grp = ?", .params = {"a"}};
  TokenCodec codec = codec_for("paging_test_items", "grp=a");

  // Forward with page_size 2: [a1 a2] [a3 a4] [a5].
  Page<store::Row> p1 = fetch(db, q, codec, 2, "");
  BOOST_TEST(ids(p1) == (std::vector<std::string>{"a1", "a2"}), boost::test_tools::per_element());
  BOOST_TEST(p1.prev_page_token == "");
  BOOST_TEST(p1.total_size == 5);
  Page<store::Row> p2 = fetch(db, q, codec, 2, p1.next_page_token);
  BOOST_TEST(ids(p2) == (std::vector<std::string>{"a3", "a4"}), boost::test_tools::per_element());
  BOOST_TEST(p2.prev_page_token != "");
  Page<store::Row> p3 = fetch(db, q, codec, 2, p2.next_page_token);
  BOOST_TEST(ids(p3) == (std::vector<std::string>{"a5"}), boost::test_tools::per_element());
  BOOST_TEST(p3.next_page_token == "");
  BOOST_TEST(p3.total_size == 5);

  // And back: [a3 a4] then [a1 a2], which is the first page again.
  Page<store::Row> b2 = fetch(db, q, codec, 2, p3.prev_page_token);
  BOOST_TEST(ids(b2) == (std::vector<std::string>{"a3", "a4"}), boost::test_tools::per_element());
  BOOST_TEST(b2.next_page_token != "");
  Page<store::Row> b1 = fetch(db, q, codec, 2, b2.prev_page_token);
  BOOST_TEST(ids(b1) == (std::vector<std::string>{"a1", "a2"}), boost::test_tools::per_element());
  BOOST_TEST(b1.prev_page_token == "");
  BOOST_TEST(
      ids(fetch(db, q, codec, 2, b1.next_page_token)) == (std::vector<std::string>{"a3", "a4"}),
      boost::test_tools::per_element());

  // Rows added before the current page and removed from it do not shift the next one.
  BOOST_REQUIRE(db.execute("INSERT INTO paging_test_items VALUES ('a0', 'a', "
                           "'2026-01-01 00:00:00.500000')")
                    .is_ok());
  BOOST_REQUIRE(db.execute("DELETE FROM paging_test_items WHERE id = 'a3'").is_ok());
  Page<store::Row> after_changes = fetch(db, q, codec, 2, p2.next_page_token);
  BOOST_TEST(ids(after_changes) == (std::vector<std::string>{"a5"}),
             boost::test_tools::per_element());

  // A page whose rows all vanished is empty but still links back.
  BOOST_REQUIRE(db.execute("DELETE FROM paging_test_items WHERE id = 'a5'").is_ok());
  Page<store::Row> empty = fetch(db, q, codec, 2, p2.next_page_token);
  BOOST_TEST(empty.items.empty());
  BOOST_TEST(empty.next_page_token == "");
  BOOST_TEST(empty.prev_page_token != "");
  // Backward from a position excludes it: the two rows before a4.
  BOOST_TEST(
      ids(fetch(db, q, codec, 2, empty.prev_page_token)) == (std::vector<std::string>{"a1", "a2"}),
      boost::test_tools::per_element());

  // A token of the filtered listing does not open the unfiltered one.
  TokenCodec all = codec_for("paging_test_items", "");
  auto foreign = parse_page_request(query({{"page_token", p1.next_page_token}}), all);
  BOOST_TEST(foreign.status().code() == Code::kInvalidArgument);
  BOOST_REQUIRE(db.execute("DROP TABLE paging_test_items").is_ok());
}

BOOST_AUTO_TEST_CASE(a_bounded_count_says_more_than_its_limit) {
  auto config = testing::test_config();
  store::Db db(config->db);
  BOOST_REQUIRE(db.execute("CREATE TABLE IF NOT EXISTS paging_count_items ("
                           "id VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,"
                           "create_time DATETIME(6) NOT NULL, PRIMARY KEY (id),"
                           "KEY (create_time, id)) ENGINE=InnoDB")
                    .is_ok());
  BOOST_REQUIRE(db.execute("DELETE FROM paging_count_items").is_ok());
  for (int i = 0; i < 7; ++i) {
    BOOST_REQUIRE(
        db.execute("INSERT INTO paging_count_items VALUES (?, ?)",
                   {"c" + std::to_string(i), "2026-01-01 00:00:0" + std::to_string(i) + ".000000"})
            .is_ok());
  }
  KeysetQuery q{.columns = "id", .from = "paging_count_items"};
  TokenCodec codec = codec_for("paging_count_items");
  auto count_with = [&](int64_t limit) {
    auto request = parse_page_request(query({{"page_size", "2"}}), codec);
    BOOST_REQUIRE(request.is_ok());
    request->count_limit = limit;
    auto page = fetch_page(db, q, *request, codec);
    BOOST_REQUIRE_MESSAGE(page.is_ok(), page.status().to_string());
    BOOST_TEST(ids(*page) == (std::vector<std::string>{"c0", "c1"}),
               boost::test_tools::per_element());
    return std::pair{page->total_size, page->total_is_lower_bound};
  };
  BOOST_TEST((count_with(0) == std::pair<int64_t, bool>{7, false}));  // exact
  BOOST_TEST((count_with(3) == std::pair<int64_t, bool>{3, true}));   // more than 3
  BOOST_TEST((count_with(7) == std::pair<int64_t, bool>{7, false}));  // exactly the limit
  BOOST_TEST((count_with(100) == std::pair<int64_t, bool>{7, false}));
  // A maintained count stays exact whatever the limit.
  q.total = []() -> Result<int64_t> { return 1234; };
  BOOST_TEST((count_with(3) == std::pair<int64_t, bool>{1234, false}));
  BOOST_REQUIRE(db.execute("DROP TABLE paging_count_items").is_ok());
}
