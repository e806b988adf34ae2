#define BOOST_TEST_MODULE http
#include <boost/test/unit_test.hpp>

#include "format/json.h"
#include "format/scope_list.h"
#include "http/errors.h"
#include "http/fastcgi.h"
#include "http/request.h"
#include "http/router.h"

using namespace portcullis;
using namespace portcullis::http;

BOOST_AUTO_TEST_CASE(url_decoding_is_strict) {
  BOOST_TEST(*url_decode("a%20b+c", true) == "a b c");
  BOOST_TEST(*url_decode("a+b", false) == "a+b");
  BOOST_TEST(*url_decode("%e2%82%AC", false) == "\xe2\x82\xac");
  BOOST_TEST(!url_decode("%", true).is_ok());
  BOOST_TEST(!url_decode("%2", true).is_ok());
  BOOST_TEST(!url_decode("%zz", true).is_ok());
  BOOST_TEST(!url_decode("abc%4", true).is_ok());
}

BOOST_AUTO_TEST_CASE(forms_keep_order_and_detect_repeats) {
  auto form = parse_urlencoded("grant_type=client_credentials&scope=a+b&empty=&flag&scope=c");
  BOOST_REQUIRE(form.is_ok());
  BOOST_TEST(*form->get("grant_type") == "client_credentials");
  BOOST_TEST(*form->get("scope") == "a b");
  BOOST_TEST(*form->get("empty") == "");
  BOOST_TEST(*form->get("flag") == "");
  BOOST_TEST(!form->get("missing").has_value());
  BOOST_TEST(*form->first_repeated() == "scope");
  BOOST_TEST(!parse_urlencoded("a=%G0").is_ok());
  BOOST_TEST(url_encode("a b/c~") == "a%20b%2Fc~");
}

BOOST_AUTO_TEST_CASE(forms_and_queries_are_capped_by_parameter_count) {
  auto many = [](size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += (i ? "&p" : "p") + std::to_string(i) + "=1";
    return out;
  };
  BOOST_TEST(parse_urlencoded(many(kMaxParameters)).is_ok());
  auto over = parse_urlencoded(many(kMaxParameters + 1));
  BOOST_REQUIRE(!over.is_ok());
  BOOST_TEST(over.status().message() == "more than 256 parameters");
  // Empty pairs are not parameters; whitespace-only ones are.
  BOOST_TEST(count_items("&&a=1&&b&", '&') == 2u);
  BOOST_TEST(count_items(" & ", '&') == 2u);
  BOOST_TEST(count_items("a=1; b=2;", ';') == 2u);
  BOOST_TEST(count_items("", ';') == 0u);
  // Through Request::form: 400 material, named.
  Request r;
  r.headers["content-type"] = "application/x-www-form-urlencoded";
  r.body = many(kMaxParameters + 1);
  auto form = r.form();
  BOOST_REQUIRE(!form.is_ok());
  BOOST_TEST(form.status().code() == Code::kInvalidArgument);
  BOOST_TEST(form.status().message().find("more than 256 parameters") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(first_repeated_names_the_earliest_repeated_name) {
  BOOST_TEST(!parse_urlencoded("a=1&b=2&c=3")->first_repeated().has_value());
  BOOST_TEST(*parse_urlencoded("a=1&b=2&b=3&a=4")->first_repeated() == "a");
  BOOST_TEST(*parse_urlencoded("x=1&b=2&c=3&c=4&b=5")->first_repeated() == "b");
  BOOST_TEST(*parse_urlencoded("x=1&y=1&y=2")->first_repeated() == "y");
  // The set-based scan handles the cap's worth of distinct names.
  std::string text;
  for (size_t i = 0; i < kMaxParameters - 1; ++i) text += "n" + std::to_string(i) + "=1&";
  BOOST_TEST(!parse_urlencoded(text)->first_repeated().has_value());
  BOOST_TEST(*parse_urlencoded(text + "n7=2")->first_repeated() == "n7");
}

BOOST_AUTO_TEST_CASE(request_helpers) {
  Request r;
  r.headers["content-type"] = "Application/X-WWW-Form-URLEncoded; charset=utf-8";
  r.headers["cookie"] = "a=1; session=\"xyz\"; b=2";
  r.body = "x=1";
  BOOST_TEST(r.content_type() == "application/x-www-form-urlencoded");
  BOOST_TEST(*r.cookie("session") == "xyz");
  BOOST_TEST(*r.cookie("b") == "2");
  BOOST_TEST(!r.cookie("c").has_value());
  BOOST_TEST(r.form().is_ok());
  r.headers["content-type"] = "application/json";
  BOOST_TEST(!r.form().is_ok());
}

BOOST_AUTO_TEST_CASE(json_bodies) {
  Request r;
  r.body = "[1]";
  auto not_object = r.json_object();
  BOOST_TEST(!not_object.is_ok());
  BOOST_TEST(not_object.status().reason() == "invalidSyntax");
  r.body = "{\"name\":\"\xc3\xa9\"}";
  BOOST_TEST((*r.json_object())["name"].asString() == "\xc3\xa9");
  BOOST_TEST(json::write(*r.json_object()) == "{\"name\":\"\xc3\xa9\"}");
}

BOOST_AUTO_TEST_CASE(router_matches_patterns_and_reports_allowed_methods) {
  Router<int> router;
  router.add("GET", "/api/v1/organizations/{organization_id}/users", 1);
  router.add("POST", "/api/v1/clients", 2);
  router.add("GET", "/api/v1/clients/{client_id}", 3);
  router.add("DELETE", "/api/v1/clients/{client_id}", 4);

  auto m = router.match("GET", "/api/v1/organizations/org_123/users");
  BOOST_REQUIRE(m.route);
  BOOST_TEST(*m.route == 1);
  BOOST_TEST(m.params["organization_id"] == "org_123");
  BOOST_TEST(*router.match("HEAD", "/api/v1/clients/x").route == 3);
  BOOST_TEST(*router.match("DELETE", "/api/v1/clients/x").route == 4);
  BOOST_TEST(!router.match("GET", "/api/v1/organizations//users").route);
  BOOST_TEST(!router.match("GET", "/api/v1/clients/x/y").route);
  BOOST_TEST(!router.match("GET", "/api/v1/clients/").route);
  auto wrong_method = router.match("PUT", "/api/v1/clients/x");
  BOOST_TEST(!wrong_method.route);
  BOOST_TEST(wrong_method.allowed_methods.size() == 2u);
  BOOST_TEST(router.match("GET", "/nope").allowed_methods.empty());
}

BOOST_AUTO_TEST_CASE(error_families_have_the_contract_shapes) {
  auto oauth =
      error_response(Family::kOAuth, Status::invalid_argument("bad").with_reason("invalid_grant"));
  BOOST_TEST(oauth.status == 400);
  BOOST_TEST(*oauth.header("content-type") == "application/json");
  auto ob = *json::parse(oauth.body);
  BOOST_TEST(ob["error"].asString() == "invalid_grant");
  BOOST_TEST(ob["error_description"].asString() == "bad");

  auto scim = error_response(Family::kScim, Status::already_exists("taken"));
  BOOST_TEST(scim.status == 409);
  BOOST_TEST(*scim.header("content-type") == "application/scim+json");
  auto sb = *json::parse(scim.body);
  BOOST_TEST(sb["schemas"][0].asString() == "urn:ietf:params:scim:api:messages:2.0:Error");
  BOOST_TEST(sb["status"].asString() == "409");
  BOOST_TEST(sb["scimType"].asString() == "uniqueness");
  auto scim413 = error_response(Family::kScim, Status::invalid_argument("big"), 413);
  BOOST_TEST(scim413.status == 413);
  BOOST_TEST(!json::parse(scim413.body)->isMember("scimType"));

  auto api = error_response(Family::kApi, Status::unauthenticated("no token"));
  BOOST_TEST(api.status == 401);
  BOOST_TEST(*api.header("content-type") == "application/problem+json");
  BOOST_TEST(*api.header("www-authenticate") == "Bearer");
  auto ab = *json::parse(api.body);
  BOOST_TEST(ab["type"].asString() == "about:blank");
  BOOST_TEST(ab["title"].asString() == "Unauthorized");
  BOOST_TEST(ab["status"].asInt() == 401);
  BOOST_TEST(ab["code"].asString() == "unauthenticated");

  auto unavailable = error_response(Family::kApi, Status::unavailable("db down"));
  BOOST_TEST(unavailable.status == 503);
  BOOST_TEST(*unavailable.header("retry-after") == "1");
  auto limited =
      error_response(Family::kOAuth, Status::resource_exhausted("slow").with_retry_after(30));
  BOOST_TEST(limited.status == 429);
  BOOST_TEST(*limited.header("retry-after") == "30");
  BOOST_TEST((*json::parse(limited.body))["error"].asString() == "temporarily_unavailable");
}

BOOST_AUTO_TEST_CASE(responses_serialise_as_cgi_and_refuse_header_injection) {
  Response r = Response::json(201, Json::Value(Json::objectValue));
  r.set_header("Location", "https://x/\r\nSet-Cookie: evil=1");
  r.set_header("X-Ok", "yes");
  std::string wire = serialize_response(r);
  BOOST_TEST(wire.rfind("Status: 201 Created\r\n", 0) == 0);
  BOOST_TEST(wire.find("evil") == std::string::npos);
  BOOST_TEST(wire.find("X-Ok: yes\r\n") != std::string::npos);
  BOOST_TEST(wire.find("Content-Length: 2\r\n\r\n{}") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(scope_lists_drop_repeats_in_order) {
  BOOST_TEST((format::scope_list("b a  b c a") == std::vector<std::string>{"b", "a", "c"}));
  // 100,000 distinct names: linear with a set (the vector scan it replaced was quadratic).
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "s" + std::to_string(i) + " ";
  BOOST_TEST(format::scope_list(text).size() == 100000u);
}
