#define BOOST_TEST_MODULE social
#include <json/json.h>

#include <boost/test/unit_test.hpp>
#include <optional>
#include <string>

#include "custom_login/login_settings.h"
#include "format/json.h"
#include "social/connection.h"
#include "social/provider_client.h"

using namespace portcullis;
using social::ProviderClient;
using social::SocialConnection;

namespace {

Json::Value parse(const std::string& text) {
  return json::parse(text).value();
}

SocialConnection created(const std::string& body) {
  SocialConnection c;
  std::optional<std::string> secret;
  Status s = social::apply_body(parse(body), false, c, secret);
  BOOST_TEST_REQUIRE(s.is_ok(), s.message());
  return c;
}

bool refused(const std::string& body) {
  SocialConnection c;
  std::optional<std::string> secret;
  return social::apply_body(parse(body), false, c, secret).code() == Code::kInvalidArgument;
}

}  // namespace

BOOST_AUTO_TEST_CASE(presets_fill_the_provider_and_generic_ones_need_their_urls) {
  SocialConnection g = created(R"({"provider":"google","client_id":"g","client_secret":"s"})");
  BOOST_TEST(g.issuer == "https://accounts.google.com");
  BOOST_TEST(g.is_oidc());
  BOOST_TEST(social::identity_realm(g) == "google");
  SocialConnection gh = created(R"({"provider":"github","client_id":"g","client_secret":"s"})");
  BOOST_TEST(!gh.is_oidc());
  BOOST_TEST(gh.emails_endpoint == "https://api.github.com/user/emails");
  BOOST_TEST(gh.mapping.subject == "id");
  SocialConnection o = created(
      R"({"provider":"oidc","issuer":"https://id.example.com","client_id":"g","client_secret":"s"})");
  BOOST_TEST(social::identity_realm(o) == "https://id.example.com");
  BOOST_TEST(social::to_json(o, "https://auth").isMember("client_secret") == false);

  BOOST_TEST(refused(R"({"provider":"oidc","client_id":"g","client_secret":"s"})"));
  BOOST_TEST(refused(R"({"provider":"google","client_id":"g"})"));
  BOOST_TEST(refused(R"({"provider":"oauth2","client_id":"g","client_secret":"s"})"));
  BOOST_TEST(refused(R"({"provider":"google","client_id":"g","client_secret":"s",
                         "token_endpoint":"https://x.example.com/t"})"));
  BOOST_TEST(refused(R"({"provider":"github","client_id":"g","client_secret":"s",
                         "token_endpoint":"http://x.example.com/t"})"));
  BOOST_TEST(refused(R"({"provider":"aol","client_id":"g","client_secret":"s"})"));
}

BOOST_AUTO_TEST_CASE(microsoft_email_counts_only_with_xms_edov_the_upn_or_a_personal_account) {
  SocialConnection ms = created(R"({"provider":"microsoft","client_id":"m","client_secret":"s"})");
  auto verified = [&](const std::string& claims) {
    return ProviderClient::from_claims(ms, parse(claims)).email_verified;
  };
  // nOAuth: a tenant's administrator sets any address as `email`; email_verified is ignored.
  BOOST_TEST(!verified(
      R"({"sub":"a","email":"ceo@victim.com","tid":"11111111-1111-1111-1111-111111111111"})"));
  BOOST_TEST(!verified(R"({"sub":"a","email":"ceo@victim.com","email_verified":true})"));
  BOOST_TEST(!verified(R"({"sub":"a","email":"ceo@victim.com","xms_edov":false})"));
  BOOST_TEST(!verified(R"({"sub":"a","email":"ceo@victim.com","xms_edov":"false"})"));
  BOOST_TEST(verified(R"({"sub":"a","email":"me@contoso.com","xms_edov":true})"));
  BOOST_TEST(verified(R"({"sub":"a","email":"me@contoso.com","xms_edov":"1"})"));
  BOOST_TEST(verified(R"({"sub":"a","email":"me@outlook.com",
                          "tid":"9188040d-6c67-4c5b-b112-36a304b66dad"})"));
  // The UPN's domain is verified by the tenant: an address equal to it (in any case) counts;
  // an address in another domain, or a preferred_username (mutable), does not.
  BOOST_TEST(verified(R"({"sub":"a","email":"Me@Contoso.com","upn":"me@contoso.com"})"));
  BOOST_TEST(!verified(R"({"sub":"a","email":"ceo@victim.com","upn":"me@contoso.com"})"));
  BOOST_TEST(!verified(R"({"sub":"a","email":"ceo@victim.com",
                           "preferred_username":"ceo@victim.com"})"));
  BOOST_TEST(!verified(R"({"sub":"a","email":"","upn":""})"));
}

BOOST_AUTO_TEST_CASE(oidc_email_counts_only_when_the_provider_says_verified) {
  SocialConnection g = created(R"({"provider":"google","client_id":"g","client_secret":"s"})");
  auto p = ProviderClient::from_claims(g, parse(R"({"sub":"1","email":"a@gmail.com"})"));
  BOOST_TEST(p.subject == "1");
  BOOST_TEST(!p.email_verified);
  BOOST_TEST(!ProviderClient::from_claims(
                  g, parse(R"({"sub":"1","email":"a@gmail.com","email_verified":false})"))
                  .email_verified);
  BOOST_TEST(ProviderClient::from_claims(
                 g, parse(R"({"sub":"1","email":"a@gmail.com","email_verified":true})"))
                 .email_verified);
  // A numeric subject (GitHub's id) is read in decimal.
  SocialConnection gh = created(R"({"provider":"github","client_id":"g","client_secret":"s"})");
  BOOST_TEST(ProviderClient::from_claims(gh, parse(R"({"id":583231})")).subject == "583231");
}

BOOST_AUTO_TEST_CASE(login_settings_accept_https_or_loopback_and_known_methods) {
  using custom_login::LoginSettings;
  auto apply = [](const std::string& body) {
    LoginSettings s;
    return custom_login::apply_body(parse(body), s).is_ok();
  };
  BOOST_TEST(apply(R"({"custom_login_url":"https://app.example.com/login"})"));
  BOOST_TEST(apply(R"({"custom_login_url":"http://127.0.0.1:3000/login"})"));
  BOOST_TEST(apply(R"({"custom_login_url":""})"));
  BOOST_TEST(!apply(R"({"custom_login_url":"http://app.example.com/login"})"));
  BOOST_TEST(!apply(R"x({"custom_login_url":"javascript:alert(1)"})x"));
  BOOST_TEST(!apply(R"({"custom_login_url":"http://localhost.evil.com/"})"));
  BOOST_TEST(apply(R"({"login_methods":["custom"]})"));
  BOOST_TEST(!apply(R"({"login_methods":[]})"));
  BOOST_TEST(!apply(R"({"login_methods":["email","email"]})"));
  BOOST_TEST(!apply(R"({"login_methods":["password"]})"));
  LoginSettings s;
  BOOST_TEST(!s.custom_enabled());
  s.custom_login_url = "https://app.example.com/login";
  BOOST_TEST(s.custom_enabled());
  s.login_methods = {"email"};
  BOOST_TEST(!s.custom_enabled());
}
