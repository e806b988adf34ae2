#define BOOST_TEST_MODULE scim
// lib/scim without the database: the filter grammar and its limits, the SQL it compiles to
// (values bound, LIKE escaped, caseExact), PATCH paths and the PATCH engine's tolerances,
// reading bodies, projection, timestamps.
#include <boost/test/unit_test.hpp>
#include <string>
#include <variant>

#include "format/json.h"
#include "scim/filter.h"
#include "scim/filter_sql.h"
#include "scim/patch.h"
#include "scim/resource.h"

using namespace portcullis;
using namespace portcullis::scim;

namespace {

Json::Value js(const std::string& text) {
  auto v = json::parse(text);
  BOOST_REQUIRE(v.is_ok());
  return *v;
}

std::string reason_of(std::string_view filter) {
  auto f = parse_filter(filter);
  if (f) return "";
  return f.status().reason();
}

}  // namespace

BOOST_AUTO_TEST_CASE(parses_the_grammar) {
  for (const char* ok :
       {"userName eq \"bjensen\"", "USERNAME EQ \"x\"", "name.familyName co \"O'Malley\"",
        "userName sw \"J\"", "title pr", "meta.lastModified gt \"2011-05-13T04:42:34Z\"",
        "title pr and userType eq \"Employee\"", "title pr or userType eq \"Intern\"",
        "userType eq \"Employee\" and (emails co \"example.com\" or emails.value co "
        "\"example.org\")",
        "userType ne \"Employee\" and not (emails co \"example.com\" or emails.value co "
        "\"example.org\")",
        "userType eq \"Employee\" and emails[type eq \"work\" and value co \"@example.com\"]",
        "emails[type eq \"work\" and value co \"@example.com\"] or ims[type eq \"xmpp\" and value "
        "co \"@foo.com\"]",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq \"42\"",
        "active eq true", "x eq null", "x eq 1.5e3", "((userName eq \"a\"))",
        "userName eq \"\\\"q\\u00e9\""}) {
    auto f = parse_filter(ok);
    BOOST_TEST(f.is_ok(), ok << ": " << f.status().message());
    if (f) {
      // The rendering parses back to itself.
      auto again = parse_filter(to_string(**f));
      BOOST_TEST(again.is_ok(), to_string(**f));
      if (again) BOOST_TEST(to_string(**again) == to_string(**f));
    }
  }
  auto f = parse_filter("a eq \"1\" or b eq \"2\" and c eq \"3\"");
  BOOST_REQUIRE(f.is_ok());
  BOOST_TEST(to_string(**f) == "(a eq \"1\" or (b eq \"2\" and c eq \"3\"))", "and binds tighter");
  auto s = parse_filter("userName eq \"\\\"q\\u00e9\"");
  BOOST_TEST((*s)->value.asString() == "\"q\xc3\xa9");
}

BOOST_AUTO_TEST_CASE(refuses_bad_filters) {
  for (const char* bad :
       {"", "userName eq", "userName xx \"a\"", "(userName eq \"a\"", "userName eq bob",
        "userName eq \"a\" and", "userName eq \"a\" userName eq \"b\"",
        "emails[type eq \"work\"].value eq \"x\"", "emails[type eq \"work\"", "a[b[c eq \"d\"]]",
        "1abc eq \"x\"", "userName eq \"unterminated", "not userName eq \"a\"", "userName  eq",
        "userName eq \"\\x\""}) {
    BOOST_TEST(reason_of(bad) == "invalidFilter", bad);
  }
  std::string deep = std::string(11, '(') + "a eq \"b\"" + std::string(11, ')');
  BOOST_TEST(reason_of(deep) == "invalidFilter");
  std::string ten = std::string(10, '(') + "a eq \"b\"" + std::string(10, ')');
  BOOST_TEST(reason_of(ten) == "");
  std::string wide = "a pr";
  for (int i = 0; i < 70; ++i) wide += " or a pr";
  BOOST_TEST(reason_of(wide) == "tooMany");
  BOOST_TEST(reason_of("userName eq \"" + std::string(5000, 'a') + "\"") == "invalidFilter");
}

BOOST_AUTO_TEST_CASE(compiles_to_parameterised_sql) {
  auto f = parse_filter("userName eq \"Bob' OR 1=1 --\" and emails co \"50%_off\"");
  BOOST_REQUIRE(f.is_ok());
  auto sql = compile_filter(**f, ResourceKind::kUser);
  BOOST_REQUIRE(sql.is_ok());
  BOOST_TEST(sql->sql.find("Bob") == std::string::npos);
  BOOST_TEST(sql->sql.find("50") == std::string::npos);
  BOOST_REQUIRE(sql->params.size() == 2u);
  BOOST_TEST(std::get<std::string>(sql->params[0]) == "Bob' OR 1=1 --");
  BOOST_TEST(std::get<std::string>(sql->params[1]) == "%50!%!_off%", "LIKE wildcards escaped");
  BOOST_TEST(sql->sql.find("u.user_name_key") != std::string::npos, "userName uses its index");
  BOOST_TEST(sql->sql.find("JSON_TABLE") != std::string::npos, "emails is multi-valued");

  auto exact = compile_filter(**parse_filter("externalId eq \"AbC\""), ResourceKind::kUser);
  BOOST_REQUIRE(exact.is_ok());
  BOOST_TEST(exact->sql.find("LOWER") == std::string::npos, "externalId is caseExact");
  auto folded = compile_filter(**parse_filter("title eq \"AbC\""), ResourceKind::kUser);
  BOOST_TEST(folded->sql.find("LOWER(?)") != std::string::npos, "title is not caseExact");

  for (const char* bad : {"fooBar eq \"x\"", "active gt true", "active eq \"yes\"", "name eq \"x\"",
                          "meta.created eq \"x\"", "password eq \"x\"", "emails[nope eq \"x\"]",
                          "members eq \"x\"", "urn:x:y:userName eq \"a\""}) {
    auto parsed = parse_filter(bad);
    BOOST_REQUIRE(parsed.is_ok());
    auto c = compile_filter(**parsed, ResourceKind::kUser);
    BOOST_TEST(!c.is_ok(), bad);
    if (!c) BOOST_TEST(c.status().reason() == "invalidFilter", bad);
  }
  auto g =
      compile_filter(**parse_filter("displayName eq \"Admins\" and members[value eq \"usr_1\"]"),
                     ResourceKind::kGroup);
  BOOST_TEST(g.is_ok());
  BOOST_TEST(!compile_filter(**parse_filter("userName eq \"a\""), ResourceKind::kGroup).is_ok());
}

BOOST_AUTO_TEST_CASE(timestamps) {
  BOOST_TEST(*rfc3339_to_db("2020-01-01T00:00:00Z") == "2020-01-01 00:00:00.000000");
  BOOST_TEST(*rfc3339_to_db("2020-01-01T01:30:00.5+01:30") == "2020-01-01 00:00:00.500000");
  for (const char* bad :
       {"yesterday", "2020-01-01", "2020-13-01T00:00:00Z", "2020-01-01T00:00:00"}) {
    BOOST_TEST(!rfc3339_to_db(bad).has_value(), bad);
  }
}

BOOST_AUTO_TEST_CASE(reads_user_bodies_leniently) {
  auto u = read_user(js(R"({"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:x"],
    "UserName":"Bob","Active":"False","addresses":null,"roles":[],"id":"usr_x","password":"p",
    "emails":[{"Value":"a@x","Primary":"True"},{"value":"b@x","primary":true}],"fooBar":1,
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":"usr_m","department":""}})"));
  BOOST_REQUIRE(u.is_ok());
  BOOST_TEST(
      json::write(*u) ==
      R"({"active":false,"emails":[{"value":"a@x"},{"primary":true,"value":"b@x"}],)"
      R"("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":{"value":"usr_m"}},)"
      R"("userName":"Bob"})");
  BOOST_TEST(read_user(js(R"({"schemas":["urn:bogus"],"userName":"a"})")).status().reason() ==
             "invalidSyntax");
  BOOST_TEST(read_user(js(R"({"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"]})"))
                 .status()
                 .reason() == "invalidValue");
  BOOST_TEST(
      read_user(
          js(R"({"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a","active":"yes"})"))
          .status()
          .reason() == "invalidValue");
}

BOOST_AUTO_TEST_CASE(patches_users_atomically_with_tolerances) {
  Json::Value doc =
      js(R"({"userName":"bob","emails":[{"type":"work","value":"w@x"}],"name":{"givenName":"B"}})");
  auto ops =
      read_patch(js(R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
    {"op":"Replace","path":"emails[type eq \"work\"].value","value":"n@x"},
    {"op":"Add","path":"emails[type eq \"home\"].value","value":"h@x"},
    {"op":"replace","value":{"name.familyName":"F","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber":"42"}},
    {"op":"Replace","path":"active","value":"False"},
    {"op":"replace","path":"id","value":"usr_1"}]})"));
  BOOST_REQUIRE(ops.is_ok());
  auto out = patch_user(doc, "usr_1", *ops);
  BOOST_REQUIRE_MESSAGE(out.is_ok(), out.status().message());
  BOOST_TEST(
      json::write(*out) ==
      R"({"active":false,"emails":[{"type":"work","value":"n@x"},{"type":"home","value":"h@x"}],)"
      R"("name":{"familyName":"F","givenName":"B"},)"
      R"("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"42"},"userName":"bob"})");
  auto reason = [&](const std::string& body) {
    auto o = read_patch(
        js(R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[)" + body +
           "]}"));
    if (!o) return o.status().reason();
    auto r = patch_user(doc, "usr_1", *o);
    return r ? std::string() : r.status().reason();
  };
  BOOST_TEST(reason(R"({"op":"move","path":"title"})") == "invalidSyntax");
  BOOST_TEST(reason(R"({"op":"remove"})") == "noTarget");
  BOOST_TEST(reason(R"({"op":"remove","path":"userName"})") == "mutability");
  BOOST_TEST(reason(R"({"op":"replace","path":"fooBar","value":1})") == "invalidPath");
  BOOST_TEST(reason(R"({"op":"replace","path":"id","value":"usr_2"})") == "mutability");
  BOOST_TEST(reason(R"({"op":"replace","path":"groups","value":[]})") == "mutability");
  BOOST_TEST(
      reason(
          R"({"op":"replace","path":"emails[type eq \"x\" or type eq \"y\"].value","value":"a"})") ==
      "noTarget");
  BOOST_TEST(
      reason(R"({"op":"replace","path":"title","value":"T"},{"op":"remove","path":"userName"})") ==
      "mutability");
  BOOST_TEST(reason(R"({"op":"remove","path":"emails[type eq \"nothing\"]"})") == "");
}

BOOST_AUTO_TEST_CASE(plans_group_patches) {
  auto ops =
      read_patch(js(R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
    {"op":"remove","path":"members[value eq \"usr_a\" or value eq \"usr_b\"]"},
    {"op":"Add","path":"members","value":[{"$ref":null,"value":"usr_c"}]},
    {"op":"Remove","path":"members","value":[{"value":"usr_d"}]},
    {"op":"replace","value":{"id":"grp_1","displayName":"N","externalId":""}}]})"));
  BOOST_REQUIRE(ops.is_ok());
  auto plan = plan_group_patch("grp_1", *ops);
  BOOST_REQUIRE_MESSAGE(plan.is_ok(), plan.status().message());
  BOOST_REQUIRE(plan->members.size() == 3u);
  BOOST_TEST((plan->members[0].kind == MemberChange::Kind::kRemove));
  BOOST_TEST(plan->members[0].user_ids.size() == 2u);
  BOOST_TEST(plan->members[1].user_ids[0] == "usr_c");
  BOOST_TEST(*plan->display_name == "N");
  BOOST_TEST(!plan->external_id->has_value());
  auto bad = read_patch(js(
      R"({"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"id":"grp_2"}}]})"));
  BOOST_TEST(plan_group_patch("grp_1", *bad).status().reason() == "mutability");
}

BOOST_AUTO_TEST_CASE(projects_responses) {
  Json::Value r =
      js(R"({"schemas":["s"],"id":"usr_1","userName":"u","name":{"givenName":"G","familyName":"F"},
    "emails":[{"value":"e","type":"work"}],"meta":{"resourceType":"User","version":"W/\"1\""},
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"D","costCenter":"C"}})");
  auto p = parse_projection(
      "userName,name.givenName,urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:"
      "department",
      "");
  BOOST_REQUIRE(p.is_ok());
  BOOST_TEST(
      json::write(project(r, *p, ResourceKind::kUser)) ==
      R"({"id":"usr_1","meta":{"resourceType":"User"},"name":{"givenName":"G"},"schemas":["s"],)"
      R"("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"D"},"userName":"u"})");
  auto e = parse_projection(
      "", "emails,name,id,urn:ietf:params:scim:schemas:extension:enterprise:2.0:User");
  BOOST_REQUIRE(e.is_ok());
  Json::Value out = project(r, *e, ResourceKind::kUser);
  BOOST_TEST(!out.isMember("emails"));
  BOOST_TEST(!out.isMember("name"));
  BOOST_TEST(out.isMember("id"), "id is returned always");
  BOOST_TEST(!out.isMember("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"));
}
