#define BOOST_TEST_MODULE metadata
#include "discovery/metadata.h"

#include <boost/test/unit_test.hpp>

#include "format/metadata.h"

using namespace portcullis;

namespace {

config::Config test_config() {
  config::Config c;
  c.base_url = "https://auth.example.com";
  return c;
}

oauth::Resource test_resource() {
  oauth::Resource r;
  r.id = "res_01jd3k0000000000000000000a";
  r.server_url = "https://mcp.example.com/mcp";
  r.scopes = {{"todo:read", "Read"}, {"todo:write", "Write"}};
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(resource_metadata_has_exactly_the_contract_fields) {
  Json::Value m = discovery::resource_metadata(test_config(), test_resource());
  const std::string base = "https://auth.example.com";
  BOOST_TEST(m["issuer"].asString() == base + "/resources/res_01jd3k0000000000000000000a");
  BOOST_TEST(m["authorization_endpoint"].asString() == base + "/oauth/authorize");
  BOOST_TEST(m["token_endpoint"].asString() == base + "/oauth/token");
  BOOST_TEST(m["registration_endpoint"].asString() ==
             base + "/resources/res_01jd3k0000000000000000000a/client_register");
  BOOST_TEST(m["jwks_uri"].asString() == base + "/keys");
  BOOST_TEST(m["revocation_endpoint"].asString() == base + "/oauth/revoke");
  BOOST_TEST(m["introspection_endpoint"].asString() == base + "/oauth/introspect");
  BOOST_TEST(m["code_challenge_methods_supported"].size() == 1u);
  BOOST_TEST(m["code_challenge_methods_supported"][0].asString() == "S256");
  BOOST_TEST(m["token_endpoint_auth_methods_supported"].size() == 3u);
  BOOST_TEST(m["response_modes_supported"][0].asString() == "query");
  BOOST_TEST(m["scopes_supported"].size() == 2u);
  BOOST_TEST(m["scopes_supported"][1].asString() == "todo:write");
  BOOST_TEST(m["client_id_metadata_document_supported"].asBool());
  BOOST_TEST(m["authorization_response_iss_parameter_supported"].asBool());
  BOOST_TEST(m.size() == 15u);
  BOOST_TEST(!format::contains_null(m));
}

BOOST_AUTO_TEST_CASE(switches_shape_the_document) {
  oauth::Resource r = test_resource();
  r.dcr_enabled = false;
  r.cimd_enabled = false;
  Json::Value m = discovery::resource_metadata(test_config(), r);
  BOOST_TEST(!m.isMember("registration_endpoint"));
  BOOST_TEST(m["client_id_metadata_document_supported"].isBool());
  BOOST_TEST(!m["client_id_metadata_document_supported"].asBool());
  BOOST_TEST(!format::contains_null(m));
}

BOOST_AUTO_TEST_CASE(openid_form_is_the_same_document_plus_oidc_fields) {
  Json::Value oauth_doc = discovery::resource_metadata(test_config(), test_resource());
  Json::Value oidc = discovery::resource_openid_configuration(test_config(), test_resource());
  for (const auto& name : oauth_doc.getMemberNames()) BOOST_TEST((oidc[name] == oauth_doc[name]));
  BOOST_TEST(oidc["subject_types_supported"][0].asString() == "public");
  BOOST_TEST(oidc["id_token_signing_alg_values_supported"][0].asString() == "RS256");
  BOOST_TEST(oidc.size() == oauth_doc.size() + 2);
}

BOOST_AUTO_TEST_CASE(environment_metadata_names_revocation_and_introspection) {
  Json::Value m = discovery::environment_metadata(test_config());
  BOOST_TEST(m["issuer"].asString() == "https://auth.example.com");
  BOOST_TEST(m["revocation_endpoint"].asString() == "https://auth.example.com/oauth/revoke");
  BOOST_TEST(m["introspection_endpoint"].asString() == "https://auth.example.com/oauth/introspect");
}

BOOST_AUTO_TEST_CASE(protected_resource_metadata_points_at_the_resource_issuer) {
  Json::Value m = discovery::protected_resource_metadata(test_config(), test_resource());
  BOOST_TEST(m["resource"].asString() == "https://mcp.example.com/mcp");
  BOOST_TEST(m["authorization_servers"].size() == 1u);
  BOOST_TEST(m["authorization_servers"][0].asString() ==
             "https://auth.example.com/resources/res_01jd3k0000000000000000000a");
  BOOST_TEST(m["bearer_methods_supported"][0].asString() == "header");
  BOOST_TEST(m["scopes_supported"].size() == 2u);
  BOOST_TEST(m.size() == 4u);
}
