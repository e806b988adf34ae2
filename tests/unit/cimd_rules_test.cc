// The CIMD rules that need no network: client_id URLs, documents, cache freshness.
#define BOOST_TEST_MODULE cimd_rules
#include <boost/test/unit_test.hpp>
#include <string>

#include "cimd/client_id_url.h"
#include "cimd/document.h"
#include "cimd/freshness.h"
#include "cimd/resolve.h"
#include "cimd_expect.h"

using namespace portcullis;
using namespace portcullis::cimd;

namespace {

const char* const kUrl = "https://client.example.com/oauth/metadata.json";

ClientIdUrl url_of(const std::string& text) {
  auto u = validate_client_id_url(text);
  BOOST_REQUIRE_MESSAGE(u.is_ok(), text << ": " << u.status().message());
  return *u;
}

// A valid document for kUrl with `extra` members spliced in (each ending in a comma).
std::string doc(const std::string& extra = "", const std::string& client_id = kUrl) {
  return "{" + extra + R"("client_id":")" + client_id +
         R"(","client_name":"Example","redirect_uris":["https://client.example.com/cb"]})";
}

Result<oauth::ClientInfo> check(const std::string& body, const std::string& url = kUrl) {
  return validate_document(url_of(url), body);
}

void expect_refused(const std::string& body, const std::string& why,
                    const std::string& url = kUrl) {
  auto r = check(body, url);
  BOOST_TEST(!r.is_ok(), body);
  if (!r.is_ok()) testing::expect_invalid_client(r.status(), why);
}

}  // namespace

// --- client_id URLs

BOOST_AUTO_TEST_CASE(client_id_urls_that_are_accepted) {
  for (const char* ok :
       {"https://client.example.com/oauth/metadata.json",
        "https://client.example.com/.well-known/client-configuration",
        "https://client.example.com:8443/c", "https://93.184.216.34/c", "https://[2001:db8::1]/c",
        "https://a.example/x/", "https://a.example/%7Euser", "https://a.example/a..b/.c/d.",
        "https://a.example/%2e%2e%2e"}) {
    BOOST_TEST(validate_client_id_url(ok).is_ok(), ok);
  }
}

BOOST_AUTO_TEST_CASE(client_id_urls_that_are_refused) {
  for (const char* bad : {"http://client.example.com/c",
                          "https://client.example.com",
                          "https://client.example.com/",
                          "https://client.example.com?x=1",
                          "https://client.example.com/c?x=1",
                          "https://client.example.com/c?",
                          "https://client.example.com/c#f",
                          "https://client.example.com/c#",
                          "https://user@client.example.com/c",
                          "https://user:pass@client.example.com/c",
                          "https://client.example.com/a/../c",
                          "https://client.example.com/a/./c",
                          "https://client.example.com/..",
                          "https://client.example.com/.",
                          "https://client.example.com/a/%2e%2e/c",
                          "https://client.example.com/a/%2E%2E/c",
                          "https://client.example.com/a/.%2e/c",
                          "https://client.example.com/a/%2e/c",
                          "https://client.example.com/a/..;x/c",
                          "https://client.example.com/a/%2e%2e%2fc",
                          "https://client.example.com/a/..%2fc",
                          "https://Client.example.com/c",
                          "https://client.example.com/c d",
                          "https://127.1/c",
                          "client.example.com/c",
                          ""}) {
    auto st = validate_client_id_url(bad).status();
    BOOST_TEST(!st.is_ok(), bad);
    BOOST_TEST(st.reason() == "invalid_client", bad);
    BOOST_TEST(st.message().find("client metadata URL") != std::string::npos, st.message());
  }
  std::string long_url = "https://client.example.com/" + std::string(2000, 'a');
  BOOST_TEST(!validate_client_id_url(long_url).is_ok());
  BOOST_TEST(validate_client_id_url(long_url.substr(0, 2000)).is_ok());
}

BOOST_AUTO_TEST_CASE(what_looks_like_a_cimd_client_id) {
  BOOST_TEST(looks_like_cimd_client_id("https://client.example.com/c"));
  BOOST_TEST(looks_like_cimd_client_id("HTTPS://client.example.com/c"));
  BOOST_TEST(looks_like_cimd_client_id("https://"));
  BOOST_TEST(!looks_like_cimd_client_id("http://client.example.com/c"));
  BOOST_TEST(!looks_like_cimd_client_id("dcr_01hzy"));
  BOOST_TEST(!looks_like_cimd_client_id("https:/"));
  BOOST_TEST(!looks_like_cimd_client_id(""));
}

// --- documents

BOOST_AUTO_TEST_CASE(a_minimal_document_makes_a_public_client) {
  auto r = check(doc());
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  BOOST_TEST((r->kind == oauth::ClientInfo::Kind::kCimd));
  BOOST_TEST(r->client_id == kUrl);
  BOOST_TEST(r->resource_id.empty());
  BOOST_TEST(r->client_name == "Example");
  BOOST_TEST(r->redirect_uris == std::vector<std::string>{"https://client.example.com/cb"});
  BOOST_TEST(r->token_endpoint_auth_method == "none");
  BOOST_TEST(r->is_public());
  BOOST_TEST(r->grant_types == (std::vector<std::string>{"authorization_code", "refresh_token"}));
  BOOST_TEST(r->client_uri.empty());
  BOOST_TEST(r->logo_uri.empty());
}

BOOST_AUTO_TEST_CASE(the_seed_form_names_the_origin) {
  const std::string seed = "https://client.example.com/.well-known/client-configuration";
  BOOST_TEST(check(doc("", "https://client.example.com"), seed).is_ok());
  BOOST_TEST(check(doc("", seed), seed).is_ok());
  auto r = check(doc("", "https://client.example.com"), seed);
  BOOST_TEST(r->client_id == seed);  // the identity is always the URL presented
  // With a port, the origin carries it as written.
  const std::string ported = "https://client.example.com:8443/.well-known/client-configuration";
  BOOST_TEST(check(doc("", "https://client.example.com:8443"), ported).is_ok());
  expect_refused(doc("", "https://client.example.com"), "client_id is not the URL", ported);
  // Anywhere else, the origin is not enough; and the seed path must match exactly.
  expect_refused(doc("", "https://client.example.com"), "client_id is not the URL");
  expect_refused(doc("", "https://client.example.com"), "client_id is not the URL",
                 "https://client.example.com/.well-known/client-configuration/x");
  expect_refused(doc("", "https://client.example.com/"), "client_id is not the URL", seed);
  expect_refused(doc("", "https://other.example.com"), "client_id is not the URL", seed);
}

BOOST_AUTO_TEST_CASE(client_id_must_match_byte_for_byte) {
  for (const std::string& other :
       {std::string(kUrl) + "/", std::string(kUrl) + "?",
        std::string("https://Client.example.com/oauth/metadata.json"),
        std::string("https://client.example.com/oauth/Metadata.json"),
        std::string("https://client.example.com:443/oauth/metadata.json"),
        std::string("https://client.example.com/oauth/metadata%2Ejson"),
        std::string("http://client.example.com/oauth/metadata.json"),
        std::string("https://client.example.com/oauth/metadata.json ")}) {
    expect_refused(doc("", other), "client_id is not the URL");
  }
  expect_refused(R"({"client_name":"x","redirect_uris":["https://a.example/cb"]})",
                 "has no client_id");
  expect_refused(R"({"client_id":7,"client_name":"x","redirect_uris":["https://a.example/cb"]})",
                 "client_id is not a string");
}

BOOST_AUTO_TEST_CASE(documents_that_are_not_one_json_object) {
  expect_refused("", "not valid JSON");
  expect_refused("not json", "not valid JSON");
  expect_refused("[1,2]", "not a JSON object");
  expect_refused("\"https://client.example.com\"", "JSON");  // the strict reader wants a container
  expect_refused(doc() + "x", "not valid JSON");
  expect_refused(doc() + doc(), "not valid JSON");
  expect_refused(R"({"client_id":"a","client_id":"b"})", "not valid JSON");  // duplicate keys
  expect_refused("{\"client_name\":\"\xff\"}", "not UTF-8");
  expect_refused(std::string(40, '[') + std::string(40, ']'), "not valid JSON");
  // The 5 KB bound holds even for a document that did not come over the network.
  std::string padded = doc(R"("pad":")" + std::string(kMaxDocumentBytes, 'x') + R"(",)");
  expect_refused(padded, "larger than 5120 bytes");
  // A BOM is skipped; whitespace around the object is JSON.
  BOOST_TEST(check("\xef\xbb\xbf" + doc()).is_ok());
  BOOST_TEST(check(" \n" + doc() + "\n").is_ok());
}

BOOST_AUTO_TEST_CASE(client_name_is_required_and_displayable) {
  const std::string uris =
      R"("redirect_uris":["https://a.example/cb"],"client_id":")" + std::string(kUrl) + "\"";
  expect_refused("{" + uris + "}", "has no client_name");
  expect_refused(R"({"client_name":"",)" + uris + "}", "client_name is empty");
  expect_refused(R"({"client_name":"   ",)" + uris + "}", "client_name is empty");
  expect_refused(R"({"client_name":["x"],)" + uris + "}", "client_name is not a string");
  expect_refused(R"({"client_name":"a\nb",)" + uris + "}", "control characters");
  expect_refused(R"({"client_name":"a\u0000b",)" + uris + "}", "control characters");
  expect_refused(R"({"client_name":"evil\u202Egnp.exe",)" + uris + "}", "control characters");
  expect_refused(R"({"client_name":"\udc00",)" + uris + "}", "not UTF-8");
  expect_refused(R"({"client_name":")" + std::string(201, 'n') + "\"," + uris + "}",
                 "longer than 200");
  BOOST_TEST(check(R"({"client_name":")" + std::string(200, 'n') + "\"," + uris + "}").is_ok());
  auto r = check(R"({"client_name":"Clé \ud83d\ude00 ✓",)" + uris + "}");
  BOOST_REQUIRE(r.is_ok());
  BOOST_TEST(r->client_name == "Clé \xf0\x9f\x98\x80 ✓");
}

BOOST_AUTO_TEST_CASE(redirect_uris_follow_the_registration_rules) {
  const std::string head = R"({"client_id":")" + std::string(kUrl) + R"(","client_name":"x",)";
  expect_refused(head.substr(0, head.size() - 1) + "}", "has no redirect_uris");
  expect_refused(head + R"("redirect_uris":[]})", "has no redirect_uris");
  expect_refused(head + R"("redirect_uris":"https://a.example/cb"})", "not an array of strings");
  expect_refused(head + R"("redirect_uris":["https://a.example/cb",3]})",
                 "not an array of strings");
  for (const char* bad : {"http://evil.example/cb", "https://a.example/cb#x", "javascript:alert(1)",
                          "https://*.example/cb", "relative/cb", "https://u@a.example/cb"}) {
    expect_refused(head + R"("redirect_uris":["https://a.example/ok",")" + bad + "\"]}",
                   "redirect_uris[1] is not allowed");
  }
  auto r = check(head + R"("redirect_uris":["http://127.0.0.1/cb","http://localhost:3000/cb",)" +
                 R"("com.example.app:/cb","https://a.example/cb?x=1"]})");
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  BOOST_TEST(r->redirect_uris.size() == 4u);
}

BOOST_AUTO_TEST_CASE(secrets_and_secret_auth_methods_are_refused) {
  expect_refused(doc(R"("client_secret":"s3cret",)"), "client secret");
  expect_refused(doc(R"("client_secret":"",)"), "client secret");
  expect_refused(doc(R"("client_secret_expires_at":0,)"), "client secret");
  expect_refused(doc(R"("token_endpoint_auth_method":"client_secret_basic",)"), "shared-secret");
  expect_refused(doc(R"("token_endpoint_auth_method":"client_secret_post",)"), "shared-secret");
  expect_refused(doc(R"("token_endpoint_auth_method":"client_secret_jwt",)"), "shared-secret");
  expect_refused(doc(R"("token_endpoint_auth_methods_supported":["none","client_secret_post"],)"),
                 "shared-secret");
  expect_refused(doc(R"("token_endpoint_auth_method":"none",)"
                     R"("token_endpoint_auth_methods_supported":["client_secret_basic"],)"),
                 "shared-secret");
  // The secret is never repeated on the error page.
  auto st = check(doc(R"("client_secret":"s3cret",)")).status();
  BOOST_TEST(st.message().find("s3cret") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(auth_method_negotiation) {
  BOOST_TEST(check(doc(R"("token_endpoint_auth_method":"none",)")).is_ok());
  expect_refused(doc(R"("token_endpoint_auth_method":"private_key_jwt",)"
                     R"("jwks_uri":"https://client.example.com/jwks.json",)"),
                 "private_key_jwt");
  expect_refused(doc(R"("token_endpoint_auth_method":"tls_client_auth",)"), "other than `none`");
  expect_refused(doc(R"("token_endpoint_auth_method":7,)"), "is not a string");
  // RP Metadata Choices: `none` among the choices wins over the preferred method.
  BOOST_TEST(check(doc(R"("token_endpoint_auth_method":"private_key_jwt",)"
                       R"("token_endpoint_auth_methods_supported":["private_key_jwt","none"],)"))
                 .is_ok());
  BOOST_TEST(check(doc(R"("token_endpoint_auth_methods_supported":["none"],)")).is_ok());
  expect_refused(doc(R"("token_endpoint_auth_methods_supported":["private_key_jwt"],)"),
                 "token_endpoint_auth_methods_supported");
  expect_refused(doc(R"("token_endpoint_auth_methods_supported":[],)"),
                 "token_endpoint_auth_methods_supported");
  expect_refused(doc(R"("token_endpoint_auth_methods_supported":"none",)"),
                 "not an array of strings");
}

BOOST_AUTO_TEST_CASE(grants_are_filtered_to_what_portcullis_issues) {
  auto grants = [](const std::string& list) {
    auto r = check(doc(R"("grant_types":)" + list + ","));
    BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().message());
    return r->grant_types;
  };
  using V = std::vector<std::string>;
  BOOST_TEST(grants(R"(["authorization_code"])") == V{"authorization_code"});
  BOOST_TEST(grants(R"(["refresh_token","authorization_code"])") ==
             (V{"authorization_code", "refresh_token"}));
  BOOST_TEST(grants(R"(["authorization_code","urn:ietf:params:oauth:grant-type:jwt-bearer",)"
                    R"("client_credentials","implicit","authorization_code"])") ==
             V{"authorization_code"});
  expect_refused(doc(R"("grant_types":["client_credentials"],)"), "authorization_code");
  expect_refused(doc(R"("grant_types":["refresh_token"],)"), "authorization_code");
  expect_refused(doc(R"("grant_types":[],)"), "authorization_code");
  expect_refused(doc(R"("grant_types":"authorization_code",)"), "not an array of strings");
  expect_refused(doc(R"("response_types":["token"],)"), "response_types");
  BOOST_TEST(check(doc(R"("response_types":["code","token"],)")).is_ok());
  expect_refused(doc(R"("response_types":"code",)"), "not an array of strings");
}

BOOST_AUTO_TEST_CASE(links_are_kept_only_when_https) {
  auto r = check(
      doc(R"("client_uri":"https://client.example.com/","logo_uri":"https://cdn.example/l.png",)"));
  BOOST_REQUIRE(r.is_ok());
  BOOST_TEST(r->client_uri == "https://client.example.com/");
  BOOST_TEST(r->logo_uri == "https://cdn.example/l.png");
  for (const char* link : {"http://client.example.com/", "javascript:alert(1)", "data:image/png,x",
                           "https://u@client.example.com/", "//client.example.com/"}) {
    auto d =
        check(doc(R"("client_uri":")" + std::string(link) + R"(","logo_uri":")" + link + "\","));
    BOOST_REQUIRE_MESSAGE(d.is_ok(), link);  // dropped, never a reason to refuse the client
    BOOST_TEST(d->client_uri.empty(), link);
    BOOST_TEST(d->logo_uri.empty(), link);
  }
  auto typed = check(doc(R"("client_uri":5,"logo_uri":{"a":1},)"));
  BOOST_REQUIRE(typed.is_ok());
  BOOST_TEST(typed->client_uri.empty());
}

BOOST_AUTO_TEST_CASE(chatgpt_and_claude_style_documents_are_accepted) {
  // ChatGPT: prefers private_key_jwt, lists `none` among its choices, has a jwks_uri.
  const std::string chatgpt_url = "https://chatgpt.com/oauth/client.json";
  auto chatgpt = check(R"({
    "client_id": "https://chatgpt.com/oauth/client.json",
    "client_uri": "https://chatgpt.com/",
    "redirect_uris": ["https://chatgpt.com/connector_platform_oauth_redirect"],
    "token_endpoint_auth_method": "private_key_jwt",
    "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "client_name": "ChatGPT",
    "token_endpoint_auth_signing_alg": "RS256",
    "jwks_uri": "https://chatgpt.com/oauth/jwks.json"
  })",
                       chatgpt_url);
  BOOST_REQUIRE_MESSAGE(chatgpt.is_ok(), chatgpt.status().message());
  BOOST_TEST(chatgpt->token_endpoint_auth_method == "none");
  BOOST_TEST(chatgpt->client_uri == "https://chatgpt.com/");
  BOOST_TEST(chatgpt->grant_types.size() == 2u);

  // Claude: a public client that also lists the jwt-bearer grant; served as text/plain
  // elsewhere (the content type plays no part here).
  const std::string claude_url = "https://claude.ai/oauth/mcp-oauth-client-metadata";
  auto claude = check(R"({"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata",)"
                      R"("client_name":"Claude","client_uri":"https://claude.ai",)"
                      R"("redirect_uris":["https://claude.ai/api/mcp/auth_callback"],)"
                      R"("grant_types":["authorization_code","refresh_token",)"
                      R"("urn:ietf:params:oauth:grant-type:jwt-bearer"],)"
                      R"("response_types":["code"],"token_endpoint_auth_method":"none"})",
                      claude_url);
  BOOST_REQUIRE_MESSAGE(claude.is_ok(), claude.status().message());
  BOOST_TEST(claude->grant_types ==
             (std::vector<std::string>{"authorization_code", "refresh_token"}));
  BOOST_TEST(claude->client_name == "Claude");
}

BOOST_AUTO_TEST_CASE(error_messages_name_the_host_never_the_document) {
  auto st = check(R"({"client_id":"<script>alert(1)</script>","client_name":"x",)"
                  R"("redirect_uris":["https://a.example/cb"]})")
                .status();
  BOOST_TEST(st.message().find("client.example.com") != std::string::npos);
  BOOST_TEST(st.message().find("<script>") == std::string::npos);
}

// --- freshness

BOOST_AUTO_TEST_CASE(freshness_is_clamped_to_five_minutes_and_a_day) {
  const int64_t now = 1'800'000'000;
  auto secs = [&](std::string_view cc, std::string_view expires = "", std::string_view date = "",
                  std::string_view age = "") {
    return cache_seconds({cc, expires, date, age}, now);
  };
  BOOST_TEST(secs("") == kMinFreshSeconds);  // no caching header
  BOOST_TEST(secs("max-age=600") == 600);
  BOOST_TEST(secs("public, max-age=3600") == 3600);
  BOOST_TEST(secs("max-age=10") == kMinFreshSeconds);  // shorter counts as 5 min
  BOOST_TEST(secs("max-age=0") == kMinFreshSeconds);
  BOOST_TEST(secs("no-store") == kMinFreshSeconds);
  BOOST_TEST(secs("no-cache, max-age=3600") == kMinFreshSeconds);
  BOOST_TEST(secs("private, max-age=3600") == kMinFreshSeconds);
  BOOST_TEST(secs("max-age=999999") == kMaxFreshSeconds);
  BOOST_TEST(secs("max-age=99999999999999999999999999") == kMaxFreshSeconds);
  BOOST_TEST(secs("max-age=86400") == kMaxFreshSeconds);
  BOOST_TEST(secs("max-age=86399") == 86399);
  BOOST_TEST(secs("max-age=300") == 300);
  BOOST_TEST(secs("max-age=301") == 301);
  BOOST_TEST(secs("MAX-AGE=1200") == 1200);
  BOOST_TEST(secs("max-age=\"1200\"") == 1200);
  BOOST_TEST(secs("max-age = 1200") == 1200);
  BOOST_TEST(secs("max-age=12x0") == kMinFreshSeconds);  // unreadable: stale
  BOOST_TEST(secs("max-age=-5") == kMinFreshSeconds);
  BOOST_TEST(secs("max-age=7200, max-age=900") == 900);   // conflicting: the smaller
  BOOST_TEST(secs("max-age=7200, s-maxage=900") == 900);  // we are a shared cache
  BOOST_TEST(secs("s-maxage=7200, max-age=900") == 7200);
  BOOST_TEST(secs("foo=\"a,max-age=1\", max-age=1200") == 1200);  // commas inside quotes
  BOOST_TEST(secs("max-age=1200", "", "", "600") == 600);         // Age counts
  BOOST_TEST(secs("max-age=1200", "", "", "1100") == kMinFreshSeconds);
  BOOST_TEST(secs("max-age=1200", "", "", "junk") == 1200);
  // Expires − Date when there is no max-age; Date defaults to now.
  BOOST_TEST(secs("", "Fri, 15 Jan 2027 08:00:00 GMT", "Fri, 15 Jan 2027 07:00:00 GMT") == 3600);
  BOOST_TEST(secs("max-age=600", "Fri, 15 Jan 2027 08:00:00 GMT",
                  "Fri, 15 Jan 2027 07:00:00 GMT") == 600);                   // max-age wins
  BOOST_TEST(secs("", "Sat, 15 Jan 2028 08:00:00 GMT") == kMaxFreshSeconds);  // a year from now
  BOOST_TEST(secs("", "Fri, 15 Jan 2027 09:00:00 GMT") == 3600);  // now is 08:00:00 that day
  BOOST_TEST(secs("", "Thu, 01 Jan 1970 00:00:00 GMT") == kMinFreshSeconds);
  BOOST_TEST(secs("", "0") == kMinFreshSeconds);
  BOOST_TEST(secs("", "Fri, 15 Jan 2027 08:00:00 GMT", "Fri, 15 Jan 2027 07:00:00 GMT", "1800") ==
             1800);
}

BOOST_AUTO_TEST_CASE(http_dates) {
  BOOST_TEST(*parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == 784111777);
  BOOST_TEST(*parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT") == 0);
  BOOST_TEST(*parse_http_date("Wed, 31 Dec 2036 23:59:59 GMT") == 2114380799);
  for (const char* bad : {"", "Sun, 06 Nov 1994 08:49:37 UTC", "Sunday, 06-Nov-94 08:49:37 GMT",
                          "Sun Nov  6 08:49:37 1994", "Mon, 06 Nov 1994 08:49:37 GMT",
                          "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nox 1994 08:49:37 GMT",
                          "Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
                          "Sun, 06 Nov 1994 08:49:37 GMT ", "Sun, 0a Nov 1994 08:49:37 GMT"}) {
    BOOST_TEST(!parse_http_date(bad).has_value(), bad);
  }
}
