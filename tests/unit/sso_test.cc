#define BOOST_TEST_MODULE sso
#include <json/json.h>

#include <boost/test/unit_test.hpp>
#include <string>

#include "format/json.h"
#include "sso/connection.h"
#include "sso/provisioning.h"
#include "sso/saml_shape.h"
#include "sso/saml_sp.h"
#include "sso/sp_keys.h"

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
  // An encrypted assertion: alone it passes (its own checks wait for its decryption), beside a
  // plain one or another encrypted one, or away from the root, it does not; nor without what
  // decryption needs (AES content, an EncryptedKey).
  auto encrypted = [](const std::string& algorithm, const std::string& key) {
    return R"(<saml:EncryptedAssertion><xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#">)"
           R"(<xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#)" +
           algorithm + R"("/><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#">)" + key +
           "</ds:KeyInfo></xenc:EncryptedData></saml:EncryptedAssertion>";
  };
  const std::string key = R"(<xenc:EncryptedKey xmlns:xenc="http://www.w3.org/2001/04/xmlenc#"/>)";
  const std::string good = encrypted("aes256-cbc", key);
  BOOST_TEST(reason_of(response(good)) == "ok");
  BOOST_TEST(reason_of(response(good + assertion())) == "assertion_count");
  BOOST_TEST(reason_of(response(good + good)) == "assertion_count");
  BOOST_TEST(reason_of(response("<samlp:Extensions>" + good + "</samlp:Extensions>")) ==
             "signature_wrapping");
  BOOST_TEST(reason_of(response("<saml:EncryptedAssertion/>")) == "decryption_failed");
  BOOST_TEST(reason_of(response(encrypted("tripledes-cbc", key))) == "decryption_failed");
  BOOST_TEST(reason_of(response(encrypted("aes256-cbc", ""))) == "decryption_failed");
  BOOST_TEST(reason_of(std::string(kMaxSamlResponseBytes + 1, ' ')) == "too_large");
}

// A decrypted assertion, on its own as Lasso hands it over.
std::string assertion_reason(const std::string& xml, bool response_signed) {
  std::string reason;
  Status s = check_assertion_shape(std::string_view(xml), response_signed, reason);
  BOOST_TEST(s.is_ok() == reason.empty());
  return s.is_ok() ? "ok" : reason;
}

const std::string kNs = R"(<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" )";

std::string standalone(const std::string& a) {
  return kNs + a.substr(std::string("<saml:Assertion ").size());
}

BOOST_AUTO_TEST_CASE(decrypted_assertions_get_the_checks_of_a_plain_one) {
  BOOST_TEST(assertion_reason(standalone(assertion()), false) == "ok");
  BOOST_TEST(assertion_reason(standalone(assertion("_a1", "")), false) == "unsigned");
  BOOST_TEST(assertion_reason(standalone(assertion("_a1", "")), true) == "ok");
  BOOST_TEST(assertion_reason(standalone(assertion("_a1", kSignature + kSignature)), false) ==
             "double_signature");
  BOOST_TEST(assertion_reason(standalone(assertion("_a2")), false) == "signature_wrapping");
  BOOST_TEST(
      assertion_reason(standalone(assertion("_a1", kSignature, "ada@evil.com<!---->.example.com")),
                       false) == "xml_comment");
  BOOST_TEST(assertion_reason(standalone(assertion("_a1", kSignature + assertion("_a3", ""))),
                              false) == "assertion_count");
  BOOST_TEST(
      assertion_reason(R"(<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>)",
                       false) == "assertion_count");
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

namespace {

// A connection to an IdP whose metadata says `want` about signed requests, and our SP with
// fresh keys.
struct SignedRequestFixture {
  Connection c;
  SamlSp sp;
  SignedRequestFixture(bool want, const SpKeys& keys) {
    c.id = "conn_unit";
    c.type = "saml";
    c.idp_metadata_xml =
        R"(<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" )"
        R"(xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://idp.example.com">)"
        R"(<md:IDPSSODescriptor WantAuthnRequestsSigned=")" +
        std::string(want ? "true" : "false") +
        R"(" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">)"
        R"(<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" )"
        R"(Location="https://idp.example.com/sso"/></md:IDPSSODescriptor></md:EntityDescriptor>)";
    sp = sp_of("https://auth.example.com", c.id + (want ? "w" : "n"));
    sp.certificates = keys.certificates;
    sp.keys = [keys]() -> Result<SpKeys> { return keys; };
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(sp_keys_metadata_and_signed_authn_requests) {
  auto keys = generate_sp_keys("conn_unit", 1800000000);
  BOOST_REQUIRE(keys.is_ok());
  BOOST_TEST(keys->certificates.signing.find("BEGIN CERTIFICATE") != std::string::npos);
  BOOST_TEST(keys->certificates.signing != keys->certificates.encryption);
  BOOST_TEST(keys->signing_key != keys->encryption_key);
  SpKeys back;
  BOOST_REQUIRE(read_private_keys_json(private_keys_json(*keys), back).is_ok());
  BOOST_TEST(back.encryption_key == keys->encryption_key);

  const std::string kSigAlg =
      "SigAlg=http%3A%2F%2Fwww.w3.org%2F2001%2F04%2Fxmldsig-more%23rsa-sha256";
  SignedRequestFixture wants(true, *keys);
  auto metadata = sp_metadata(wants.sp, true);
  BOOST_TEST(metadata.find(R"(AuthnRequestsSigned="true")") != std::string::npos);
  BOOST_TEST(metadata.find(R"(<md:KeyDescriptor use="signing">)") != std::string::npos);
  BOOST_TEST(metadata.find(R"(<md:KeyDescriptor use="encryption">)") != std::string::npos);
  BOOST_TEST(signs_authn_requests(wants.c, wants.sp).value());
  auto signed_request = authn_request(wants.c, wants.sp, "relay");
  BOOST_REQUIRE(signed_request.is_ok());
  BOOST_TEST(signed_request->url.find(kSigAlg) != std::string::npos);
  BOOST_TEST(signed_request->url.find("&Signature=") != std::string::npos);

  SignedRequestFixture plain(false, *keys);
  BOOST_TEST(!signs_authn_requests(plain.c, plain.sp).value());
  auto unsigned_request = authn_request(plain.c, plain.sp, "relay");
  BOOST_REQUIRE(unsigned_request.is_ok());
  BOOST_TEST(unsigned_request->url.find("SigAlg=") == std::string::npos);
  BOOST_TEST(unsigned_request->url.find("Signature=") == std::string::npos);
  plain.c.sign_authn_requests = true;  // the connection asks
  auto asked = authn_request(plain.c, plain.sp, "relay");
  BOOST_REQUIRE(asked.is_ok());
  BOOST_TEST(asked->url.find(kSigAlg) != std::string::npos);
}
