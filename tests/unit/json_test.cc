#define BOOST_TEST_MODULE json
#include "format/json.h"

#include <boost/test/unit_test.hpp>

#include "format/json_strings.h"

using namespace portcullis;

namespace {
constexpr int kDepth = 16;
Json::Value parse(std::string_view text) {
  return json::parse(text).value();
}
}  // namespace

BOOST_AUTO_TEST_CASE(json_writer_is_compact_utf8) {
  const Json::Value value = parse(R"({ "b" : [1, "x/y", {"c": true}], "a": 1.5, "u": "\u00e9" })");
  BOOST_TEST(json::write(value) == "{\"a\":1.5,\"b\":[1,\"x/y\",{\"c\":true}],\"u\":\"\xc3\xa9\"}");
}

BOOST_AUTO_TEST_CASE(json_reader_is_strict_and_bounded) {
  for (std::string_view bad : {
           R"({"a":1,"a":2})",
           R"({"a":{"b":1,"b":1}})",
           R"({"a":1} x)",
           R"({"a":1,})",
           R"({'a':1})",
           R"({"a":NaN})",
           "// c\n{\"a\":1}",
           R"({"a":1e400})",
           "",
           "1",
           R"("s")",
           "{",
       }) {
    BOOST_TEST(!json::parse(bad).is_ok(), "accepted " << bad);
  }
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  BOOST_TEST(json::parse(nested(kDepth), kDepth).is_ok());
  BOOST_TEST(!json::parse(nested(kDepth + 1), kDepth).is_ok());
  auto nested_value = [](int depth) {
    return std::string(depth - 1, '[') + "1" + std::string(depth - 1, ']');
  };
  BOOST_TEST(json::parse(nested_value(kDepth), kDepth).is_ok());
  BOOST_TEST(!json::parse(nested_value(kDepth + 1), kDepth).is_ok());
  // Past jsoncpp's own limit it throws internally; the caller only sees an error value.
  auto deep = json::parse(nested(100000));
  BOOST_TEST(!deep.is_ok());
  BOOST_TEST(deep.status().code() == Code::kInvalidArgument);
  // The reader still works after refusing deep input.
  BOOST_TEST(json::parse(R"({"ok":true})").is_ok());
  // Errors name the position, for the caller to fix the body.
  BOOST_TEST(json::parse("{\"a\":}").status().message().find("Line 1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(find_member_never_throws) {
  Json::Value v = parse(R"({"a":{"b":1}})");
  BOOST_TEST(json::find_member(v, "a") != nullptr);
  BOOST_TEST(json::find_member(v, "z") == nullptr);
  BOOST_TEST(json::find_member(Json::Value(1), "a") == nullptr);
  BOOST_TEST(json::find_member(Json::Value(Json::arrayValue), "a") == nullptr);
}

BOOST_AUTO_TEST_CASE(documents_are_capped_by_their_number_of_values) {
  auto array_of = [](size_t n) {
    std::string out = "[";
    for (size_t i = 0; i < n; ++i) out += i ? ",0" : "0";
    return out + "]";
  };
  BOOST_TEST(json::parse(array_of(19000)).is_ok());
  auto over = json::parse(array_of(480000));
  BOOST_REQUIRE(!over.is_ok());
  BOOST_TEST(over.status().message() == "JSON has more than 20000 values");
  // Separators inside strings are not values.
  BOOST_TEST(json::parse("[\"" + std::string(100000, ',') + "\\\",[:\"]").is_ok());
}

BOOST_AUTO_TEST_CASE(stored_string_arrays_keep_strings_only) {
  const Json::Value mixed = parse(R"(["b", 1, "a", null, ["c"], "b"])");
  BOOST_TEST(json::string_elements(mixed) == (std::vector<std::string>{"b", "a", "b"}));
  BOOST_TEST(json::string_elements(parse(R"({"a":"b"})")).empty());
  BOOST_TEST(json::string_elements(Json::Value("a")).empty());

  BOOST_TEST(json::string_set(R"(["b", 1, "a", "b"])") == (std::set<std::string>{"a", "b"}));
  BOOST_TEST(json::string_set(R"("a")").empty());
  BOOST_TEST(json::string_set("not json").empty());
  BOOST_TEST(json::string_set("").empty());
}
