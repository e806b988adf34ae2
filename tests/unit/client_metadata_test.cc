#define BOOST_TEST_MODULE client_metadata
#include "clients/client_metadata.h"

#include <boost/test/unit_test.hpp>

#include "format/json.h"

using namespace portcullis;
using namespace portcullis::oauth;

namespace {

Resource todo() {
  Resource r;
  r.id = "res_01jd3k0000000000000000000a";
  r.scopes = {{"todo:read", ""}, {"todo:write", ""}};
  return r;
}

Json::Value body(std::string_view text) {
  return json::parse(text).value();
}

Result<ClientMetadata> parse(std::string_view text) {
  return parse_client_metadata(body(text), todo());
}

std::string reason(std::string_view text) {
  return parse(text).status().reason();
}

}  // namespace

BOOST_AUTO_TEST_CASE(defaults_apply_to_a_minimal_request) {
  auto m = parse(R"({"redirect_uris":["http://localhost:3000/callback"]})");
  BOOST_REQUIRE(m.is_ok());
  BOOST_TEST(m->token_endpoint_auth_method == "client_secret_basic");
  BOOST_TEST(m->grant_types == (std::vector<std::string>{"authorization_code", "refresh_token"}),
             boost::test_tools::per_element());
  BOOST_TEST(m->response_types == std::vector<std::string>{"code"},
             boost::test_tools::per_element());
  BOOST_TEST(!m->is_public());
  Json::Value echo = client_metadata_json(*m);
  BOOST_TEST(echo["token_endpoint_auth_method"].asString() == "client_secret_basic");
  BOOST_TEST(echo["grant_types"].size() == 2u);
  BOOST_TEST(!echo.isMember("client_name"));  // not registered: left out, never null
  BOOST_TEST(!echo.isMember("scope"));
}

BOOST_AUTO_TEST_CASE(a_full_request_is_echoed_field_by_field) {
  auto m = parse(R"({
    "client_name": "Claude", "redirect_uris": ["https://claude.ai/cb", "http://127.0.0.1/cb"],
    "token_endpoint_auth_method": "none", "grant_types": ["authorization_code"],
    "response_types": ["code"], "scope": "todo:write  todo:read todo:read",
    "client_uri": "https://claude.ai", "logo_uri": "https://claude.ai/logo.png",
    "tos_uri": "https://claude.ai/tos", "policy_uri": "https://claude.ai/privacy",
    "contacts": ["ops@example.com"], "software_id": "claude", "software_version": "1.2",
    "application_type": "native", "jwks_uri": "https://ignored.example", "x": {"y": [1]}})");
  BOOST_REQUIRE_MESSAGE(m.is_ok(), m.status().to_string());
  BOOST_TEST(m->is_public());
  BOOST_TEST(m->scope == "todo:read todo:write");  // normalised
  Json::Value echo = client_metadata_json(*m);
  BOOST_TEST(echo["client_name"].asString() == "Claude");
  BOOST_TEST(echo["redirect_uris"].size() == 2u);
  BOOST_TEST(echo["grant_types"].size() == 1u);
  BOOST_TEST(echo["contacts"][0].asString() == "ops@example.com");
  BOOST_TEST(echo["application_type"].asString() == "native");
  BOOST_TEST(!echo.isMember("jwks_uri"));  // unknown fields are ignored, not stored
  BOOST_TEST(!echo.isMember("x"));
  BOOST_TEST(echo.size() == 14u);
  // What is stored reads back the same.
  auto again = stored_client_metadata(echo);
  BOOST_REQUIRE(again.is_ok());
  BOOST_TEST((client_metadata_json(*again) == echo));
}

BOOST_AUTO_TEST_CASE(redirect_uri_problems_are_invalid_redirect_uri) {
  for (const char* bad : {
           R"({})",
           R"({"redirect_uris":[]})",
           R"({"redirect_uris":"https://a.example/cb"})",
           R"({"redirect_uris":[7]})",
           R"({"redirect_uris":["http://evil.test/cb"]})",
           R"({"redirect_uris":["https://a.test/cb#x"]})",
           R"({"redirect_uris":["https://*.a.test/cb"]})",
           R"({"redirect_uris":["https://u@a.test/cb"]})",
           R"j({"redirect_uris":["javascript:alert(1)"]})j",
           R"({"redirect_uris":["data:text/html,x"]})",
           R"({"redirect_uris":["file:///etc/passwd"]})",
           R"({"redirect_uris":["https://ok.test/cb","http://evil.test/cb"]})",
       }) {
    BOOST_TEST(reason(bad) == "invalid_redirect_uri", bad);
  }
  std::string many = R"({"redirect_uris":[)";
  for (int i = 0; i < 21; ++i)
    many += (i ? "," : "") + std::string("\"https://a.test/") + std::to_string(i) + "\"";
  BOOST_TEST(reason(many + "]}") == "invalid_redirect_uri");
  // Repeats are dropped, not counted against the limit.
  auto repeated = parse(R"({"redirect_uris":["https://a.test/cb","https://a.test/cb"]})");
  BOOST_REQUIRE(repeated.is_ok());
  BOOST_TEST(repeated->redirect_uris.size() == 1u);
}

BOOST_AUTO_TEST_CASE(other_problems_are_invalid_client_metadata) {
  const std::string uris = R"("redirect_uris":["https://a.test/cb"])";
  for (std::string field : {
           R"("token_endpoint_auth_method":"private_key_jwt")",
           R"("token_endpoint_auth_method":"client_secret_jwt")",
           R"("token_endpoint_auth_method":7)",
           R"("grant_types":["refresh_token"])",
           R"("grant_types":["authorization_code","implicit"])",
           R"("grant_types":["authorization_code","client_credentials"])",
           R"("grant_types":["authorization_code","password"])",
           R"("grant_types":[])",
           R"("grant_types":"authorization_code")",
           R"("response_types":["token"])",
           R"("response_types":["code","token"])",
           R"("response_types":[])",
           R"("scope":"todo:read todo:admin")",
           R"("scope":["todo:read"])",
           R"("client_name":7)",
           R"("client_name":"a\nb")",
           R"("client_uri":"http://a.test/")",
           R"j("logo_uri":"javascript:alert(1)")j",
           R"("tos_uri":"https://u:p@a.test/")",
           R"("policy_uri":"/privacy")",
           R"("contacts":"ops@example.com")",
           R"("contacts":[""])",
           R"("contacts":[1])",
           R"("software_id":{})",
           R"("application_type":"desktop")",
       }) {
    BOOST_TEST(reason("{" + uris + "," + field + "}") == "invalid_client_metadata", field);
  }
  BOOST_TEST(reason("{" + uris + R"(,"client_name":")" + std::string(201, 'n') + "\"}") ==
             "invalid_client_metadata");
  std::string contacts = R"("contacts":[)";
  for (int i = 0; i < 11; ++i)
    contacts += (i ? "," : "") + std::string("\"c") + std::to_string(i) + "\"";
  BOOST_TEST(reason("{" + uris + "," + contacts + "]}") == "invalid_client_metadata");
  BOOST_TEST(reason("{" + uris + R"(,"logo_uri":"https://a.test/)" + std::string(2000, 'x') +
                    "\"}") == "invalid_client_metadata");
  BOOST_TEST(parse_client_metadata(Json::Value(Json::arrayValue), todo()).status().reason() ==
             "invalid_client_metadata");
}

BOOST_AUTO_TEST_CASE(nulls_count_as_absent) {
  auto m = parse(R"({"redirect_uris":["https://a.test/cb"],"client_name":null,"scope":null,
                     "grant_types":null,"logo_uri":null})");
  BOOST_REQUIRE_MESSAGE(m.is_ok(), m.status().to_string());
  BOOST_TEST(m->grant_types.size() == 2u);
  BOOST_TEST(!client_metadata_json(*m).isMember("logo_uri"));
}

BOOST_AUTO_TEST_CASE(a_resource_without_scopes_accepts_no_scope) {
  Resource bare;
  auto m =
      parse_client_metadata(body(R"({"redirect_uris":["https://a.test/cb"],"scope":"x"})"), bare);
  BOOST_TEST(m.status().reason() == "invalid_client_metadata");
  BOOST_TEST(
      parse_client_metadata(body(R"({"redirect_uris":["https://a.test/cb"],"scope":" "})"), bare)
          .is_ok());
}
