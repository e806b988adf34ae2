#define BOOST_TEST_MODULE sso
#include <json/json.h>

#include <boost/test/unit_test.hpp>
#include <string>

#include "format/json.h"
#include "sso/connection.h"
#include "sso/provisioning.h"
#include "sso/saml_shape.h"

using namespace portcullis;
using namespace portcullis::sso;

namespace {

const std::string kSignature =
    R"(<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo>)"
    R"(<ds:Reference URI="#_a1"><ds:DigestValue>AA</ds:DigestValue></ds:Reference>)"
    R"(</ds:SignedInfo><ds:SignatureValue>AA</ds:SignatureValue></ds:Signature>)";

std::string assertion(const std::string& id = "_a1", const std::string& signature = kSignature,
                      const std::string& name_id = "ada@example.com") {
  return R"(<saml:Assertion ID=")" + id + R"("><saml:Issuer>https://idp</saml:Issuer>)" +
         signature + "<saml:Subject><saml:NameID>" + name_id +
         "</saml:NameID></saml:Subject></saml:Assertion>";
}

std::string response(const std::string& inner) {
  return R"(<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" )"
         R"(xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r1">)"
         "<saml:Issuer>https://idp</saml:Issuer>" +
         inner + "</samlp:Response>";
}

std::string reason_of(const std::string& xml) {
  std::string reason;
  Status s = check_response_shape(xml, reason);
  BOOST_TEST(s.is_ok() == reason.empty());
  return s.is_ok() ? "ok" : reason;
}

Json::Value parse(const std::string& text) {
  auto v = json::parse(text);
  BOOST_REQUIRE(v.is_ok());
  return *v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(saml_shape_accepts_one_signed_assertion) {
  BOOST_TEST(reason_of(response(assertion())) == "ok");
}

BOOST_AUTO_TEST_CASE(saml_shape_refuses_each_attack_with_its_reason) {
  BOOST_TEST(reason_of("not xml") == "malformed_xml");
  BOOST_TEST(reason_of("<x/>") == "not_a_response");
  BOOST_TEST(reason_of(R"(<!DOCTYPE r [<!ENTITY e "x">]>)" + response(assertion())) ==
             "dtd_forbidden");
  BOOST_TEST(reason_of(response(assertion("_evil", "") + assertion())) == "assertion_count");
  BOOST_TEST(reason_of(response("<samlp:Extensions>" + assertion() + "</samlp:Extensions>")) ==
             "signature_wrapping");
  BOOST_TEST(reason_of(response(assertion("_a1", kSignature + kSignature))) == "double_signature");
  BOOST_TEST(reason_of(response(assertion("_a1", ""))) == "unsigned");
  BOOST_TEST(reason_of(response(assertion("_a2"))) == "signature_wrapping");  // URI is #_a1
  BOOST_TEST(reason_of(response(assertion("_a1", kSignature, "ada@evil.com<!---->.example.com"))) ==
             "xml_comment");
  BOOST_TEST(reason_of(response(assertion("_r1"))) == "duplicate_id");
  BOOST_TEST(reason_of(response("<saml:EncryptedAssertion/>")) == "encrypted_assertion");
  BOOST_TEST(reason_of(std::string(kMaxSamlResponseBytes + 1, ' ')) == "too_large");
}

BOOST_AUTO_TEST_CASE(oidc_connections_need_issuer_client_and_secret) {
  Connection c;
  std::optional<std::string> secret;
  BOOST_TEST(apply_body(parse(R"({"type":"oidc","name":"Okta","issuer":"https://idp.example.com",
      "client_id":"abc","client_secret":"s3"})"),
                        false, c, secret)
                 .is_ok());
  BOOST_TEST(secret.value() == "s3");
  BOOST_TEST(c.scopes.size() == 3u);
  BOOST_TEST(config_json(c).isMember("client_secret") == false);
  BOOST_TEST(to_json(c, "https://auth").isMember("client_secret") == false);

  for (
      const char* bad :
      {R"({"type":"oidc","name":"x","issuer":"http://idp.example.com","client_id":"a","client_secret":"b"})",
       R"({"type":"oidc","name":"x","issuer":"https://idp.example.com","client_id":"a"})",
       R"({"type":"oidc","name":"x","issuer":"https://idp.example.com","client_id":"a","client_secret":"b","scopes":["email"]})",
       R"({"type":"oidc","issuer":"https://idp.example.com","client_id":"a","client_secret":"b"})",
       R"({"type":"oidc","name":"x","state":"active","issuer":"https://i.example.com","client_id":"a","client_secret":"b"})",
       R"({"type":"ldap","name":"x"})", R"({"type":"saml","name":"x"})"}) {
    Connection d;
    std::optional<std::string> s;
    BOOST_TEST(!apply_body(parse(bad), false, d, s).is_ok(), bad);
  }
}

BOOST_AUTO_TEST_CASE(claims_through_the_mapping_and_email_verified) {
  AttributeMapping m{"upn", "given_name", "family_name", ""};
  AssertedUser u = user_from_claims(parse(R"({"sub":"1","upn":"ada@acme.com","email":"x@y.com",
      "given_name":"Ada"})"),
                                    m);
  BOOST_TEST(u.email == "ada@acme.com");
  BOOST_TEST(u.given_name == "Ada");
  AssertedUser unverified =
      user_from_claims(parse(R"({"sub":"1","email":"ada@acme.com","email_verified":false})"),
                       default_mapping("oidc"));
  BOOST_TEST(unverified.email.empty());
}
