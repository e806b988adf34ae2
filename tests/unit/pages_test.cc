#define BOOST_TEST_MODULE pages
#include <boost/test/unit_test.hpp>

#include "crypto/base64.h"
#include "crypto/hash.h"
#include "pages/consent_view.h"
#include "pages/error_page.h"
#include "pages/html.h"
#include "pages/security_headers.h"
#include "pages/signin_views.h"
#include "pages/stylesheet.h"

using namespace portcullis;
using pages::render;

namespace {

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

// Every page carries the same security headers (contract §3; RFC 9700 §4.16).
void check_page_headers(const http::Response& r, std::string_view extra_form_target = "") {
  BOOST_TEST(r.header("Content-Type").value_or("") == "text/html; charset=utf-8");
  std::string csp = r.header("Content-Security-Policy").value_or("");
  BOOST_TEST(contains(csp, "default-src 'none'"));
  BOOST_TEST(contains(csp, "style-src '" + pages::stylesheet_hash() + "'"));
  BOOST_TEST(contains(csp, "frame-ancestors 'none'"));
  BOOST_TEST(contains(csp, "base-uri 'none'"));
  std::string form_action = "form-action 'self'";
  if (!extra_form_target.empty()) form_action += " " + std::string(extra_form_target);
  BOOST_TEST(contains(csp, form_action + ";"), csp);
  BOOST_TEST(!contains(csp, "script-src"));
  BOOST_TEST(r.header("X-Frame-Options").value_or("") == "DENY");
  BOOST_TEST(r.header("Referrer-Policy").value_or("") == "no-referrer");
  BOOST_TEST(r.header("Cache-Control").value_or("") == "no-store");
  BOOST_TEST(contains(r.body, "<html lang=\"en\">"));
  BOOST_TEST(contains(r.body, "name=\"viewport\""));
  BOOST_TEST(contains(r.body, "<h1 id=\"page-title\">"));
  BOOST_TEST(!contains(r.body, "<script"));
}

}  // namespace

BOOST_AUTO_TEST_CASE(escaping_covers_text_and_attributes) {
  BOOST_TEST(pages::escape("<a href=\"x\" onclick='y'>&amp;</a>") ==
             "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
  BOOST_TEST(pages::escape(std::string("a\0b\x01\x7f\tc\nd", 9)) == "ab\tc\nd");
  BOOST_TEST(pages::escape("caf\xc3\xa9 \xe2\x80\xae") ==
             "caf\xc3\xa9 \xe2\x80\xae");  // UTF-8 kept
  auto html = render("<p title=\"{{t}}\">{{t}}</p>", {{"t", "\"><script>alert(1)</script>"}});
  BOOST_REQUIRE(html.is_ok());
  BOOST_TEST(html->str() ==
             "<p title=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\">&quot;&gt;&lt;script&gt;"
             "alert(1)&lt;/script&gt;</p>");
}

BOOST_AUTO_TEST_CASE(markup_values_only_in_element_text) {
  auto inner = render("<b>{{x}}</b>", {{"x", "<i>"}});
  BOOST_REQUIRE(inner.is_ok());
  auto outer = render("<p>{{inner}}</p>", {{"inner", *inner}});
  BOOST_REQUIRE(outer.is_ok());
  BOOST_TEST(outer->str() == "<p><b>&lt;i&gt;</b></p>");
  BOOST_TEST(!render("<p title=\"{{inner}}\"></p>", {{"inner", *inner}}).is_ok());
}

BOOST_AUTO_TEST_CASE(placeholders_refused_where_escaping_is_not_enough) {
  const char* refused[] = {
      "<p {{v}}></p>",                        // attribute name position
      "<{{v}}></{{v}}>",                      // tag name
      "<p title={{v}}></p>",                  // unquoted value
      "<p title='{{v}}'></p>",                // single-quoted value
      "<a href=\"{{v}}\">x</a>",              // URL attribute: value would choose the scheme
      "<form action=\"{{v}}\"></form>",       // likewise
      "<p onclick=\"go('{{v}}')\">x</p>",     // event handler
      "<p style=\"color:{{v}}\">x</p>",       // CSS
      "<style>p{content:\"{{v}}\"}</style>",  // raw text
      "<script>var x=\"{{v}}\";</script>",    // raw text
      "<!-- {{v}} -->",                       // comment
      "<p title=\"x\"",                       // ends inside a tag
  };
  for (const char* t : refused) {
    auto r = render(t, {{"v", "x"}});
    BOOST_TEST(!r.is_ok(), t);
    if (!r.is_ok()) BOOST_TEST(r.status().code() == Code::kInternal);
  }
  // Allowed: after the start of a URL attribute, and after a <style> element has ended.
  BOOST_TEST(render("<a href=\"/x?id={{v}}\">y</a>", {{"v", "a&b"}})->str() ==
             "<a href=\"/x?id=a&amp;b\">y</a>");
  BOOST_TEST(render("<style>p{}</style><p>{{v}}</p>", {{"v", "a"}}).is_ok());
  // Missing and unused values are template bugs.
  BOOST_TEST(!render("<p>{{a}}</p>", {}).is_ok());
  BOOST_TEST(!render("<p>x</p>", {{"a", "1"}}).is_ok());
}

BOOST_AUTO_TEST_CASE(csp_hash_matches_the_inline_stylesheet) {
  std::string expected = "sha256-" + crypto::base64_encode(crypto::sha256(pages::stylesheet()));
  BOOST_TEST(pages::stylesheet_hash() == expected);
  auto r = pages::error_page(400, "T", "M");
  std::string css = "<style>" + std::string(pages::stylesheet()) + "</style>";
  BOOST_TEST(contains(r.body, css));  // byte for byte: the hash must cover what is sent
  check_page_headers(r);
}

BOOST_AUTO_TEST_CASE(form_action_sources_for_redirect_uris) {
  using pages::form_action_source;
  BOOST_TEST(form_action_source("https://App.Example.com/cb?x=1").value_or("") ==
             "https://app.example.com");
  BOOST_TEST(form_action_source("http://127.0.0.1:53682/callback").value_or("") ==
             "http://127.0.0.1:53682");
  BOOST_TEST(form_action_source("http://[::1]:8080/cb").value_or("") == "http://[::1]:8080");
  BOOST_TEST(form_action_source("com.example.app:/oauth").value_or("") == "com.example.app:");
  BOOST_TEST(!form_action_source("javascript:alert(1)"));
  BOOST_TEST(!form_action_source("https://a.example;script-src */cb"));
  BOOST_TEST(!form_action_source("https://a.example 'unsafe-inline'/cb"));
  BOOST_TEST(!form_action_source("https://user@a.example/cb"));
  BOOST_TEST(!form_action_source("https://a.example:99999999/cb"));
  BOOST_TEST(!form_action_source("no-colon"));
  BOOST_TEST(!form_action_source("https:/a.example"));
  std::string csp = pages::content_security_policy({"http://127.0.0.1:53682"});
  BOOST_TEST(contains(csp, "form-action 'self' http://127.0.0.1:53682;"));
}

BOOST_AUTO_TEST_CASE(error_pages_for_people) {
  auto r = pages::error_page(400, "Bad <thing>", "It's \"wrong\"");
  BOOST_TEST(r.status == 400);
  check_page_headers(r);
  BOOST_TEST(contains(r.body, "Bad &lt;thing&gt;"));
  BOOST_TEST(contains(r.body, "It&#39;s &quot;wrong&quot;"));
  auto expired = pages::expired_login_page();
  BOOST_TEST(expired.status == 400);
  BOOST_TEST(!expired.header("Location"));
  BOOST_TEST(contains(expired.body,
                      "This sign-in link has expired; return to the application and try again."));
  auto busy = pages::status_page(Status::unavailable("db down").with_retry_after(3));
  BOOST_TEST(busy.status == 503);
  BOOST_TEST(busy.header("Retry-After").value_or("") == "3");
  BOOST_TEST(!contains(busy.body, "db down"));  // API-facing messages stay out of pages
  BOOST_TEST(pages::status_page(Status::not_found("x")).status == 400);
  BOOST_TEST(pages::status_page(Status::internal("secret detail")).status == 500);
  auto many = pages::too_many_codes_page("lr1", 125);
  BOOST_TEST(many.status == 429);
  BOOST_TEST(many.header("Retry-After").value_or("") == "125");
  BOOST_TEST(contains(many.body, "3 minutes"));
  BOOST_TEST(contains(many.body, "href=\"/oauth/login?login_request_id=lr1\""));
  check_page_headers(many);
}

BOOST_AUTO_TEST_CASE(login_page_has_the_stable_hooks) {
  pages::LoginView v;
  v.login_request_id = "lr-1";
  v.csrf_token = "csrf\"x";
  v.resource_name = "Todo <Server>";
  v.email = "a\"@example.com";
  auto r = pages::login_page(200, v);
  check_page_headers(r);
  BOOST_TEST(contains(r.body, "<form method=\"post\" action=\"/oauth/login/email\""));
  BOOST_TEST(contains(r.body, "name=\"email\" type=\"email\" autocomplete=\"email\""));
  BOOST_TEST(contains(r.body, "value=\"a&quot;@example.com\""));
  BOOST_TEST(contains(r.body, "<label for=\"email\">"));
  BOOST_TEST(contains(r.body, "name=\"csrf\" value=\"csrf&quot;x\""));
  BOOST_TEST(contains(r.body, "name=\"login_request_id\" value=\"lr-1\""));
  BOOST_TEST(contains(r.body, "Todo &lt;Server&gt;"));
  BOOST_TEST(contains(r.body, "aria-invalid=\"false\""));
  BOOST_TEST(!contains(r.body, "role=\"alert\""));
  BOOST_TEST(!contains(r.body, "class=\"methods\""));

  // Other methods appear above the e-mail form, which stays; only our own paths are linked.
  v.error = "Enter <an> address";
  v.methods = {{"Continue with Example SSO", "/sso/start?c=1&d=2"},
               {"Evil", "//evil.example/x"},
               {"Evil too", "javascript:alert(1)"}};
  auto with = pages::login_page(400, v);
  BOOST_TEST(with.status == 400);
  BOOST_TEST(contains(with.body, "role=\"alert\" id=\"form-error\">Enter &lt;an&gt; address"));
  BOOST_TEST(
      contains(with.body, "aria-invalid=\"true\" aria-describedby=\"form-error email-help\""));
  BOOST_TEST(contains(with.body, "href=\"/sso/start?c=1&amp;d=2\""));
  BOOST_TEST(!contains(with.body, "evil.example"));
  BOOST_TEST(!contains(with.body, "javascript"));
  BOOST_TEST(with.body.find("class=\"methods\"") < with.body.find("name=\"email\""));
}

// Home-realm discovery answering the e-mail form: a page (not a 500) whose link and Refresh
// header both go to our /sso/start with the given query, escaped in the attribute.
BOOST_AUTO_TEST_CASE(continue_to_identity_provider_page) {
  auto r = pages::continue_to_idp_page("login_request_id=lr1&connection_id=con%201&x=%22");
  BOOST_TEST(r.status == 200);
  std::string csp = r.header("Content-Security-Policy").value_or("");
  BOOST_TEST(contains(csp, "default-src 'none'"));
  BOOST_TEST(contains(csp, "form-action 'self';"), csp);
  BOOST_TEST(contains(r.body, "<h1 id=\"page-title\">Sign in with your organization</h1>"));
  BOOST_TEST(
      contains(r.body,
               "id=\"continue\" "
               "href=\"/sso/start?login_request_id=lr1&amp;connection_id=con%201&amp;x=%22\""));
  BOOST_TEST(r.header("Refresh").value_or("") ==
             "0; url=/sso/start?login_request_id=lr1&connection_id=con%201&x=%22");
}

BOOST_AUTO_TEST_CASE(code_and_link_pages) {
  pages::CodeView c{"lr 1", "tok", "a@example.com", "", {"http://127.0.0.1:5000"}};
  auto r = pages::code_page(200, c);
  check_page_headers(r, "http://127.0.0.1:5000");
  BOOST_TEST(contains(r.body, "action=\"/oauth/login/code\""));
  BOOST_TEST(contains(r.body,
                      "name=\"code\" type=\"text\" inputmode=\"numeric\" "
                      "autocomplete=\"one-time-code\""));
  BOOST_TEST(contains(r.body, "<label for=\"code\">"));
  BOOST_TEST(contains(r.body, "href=\"/oauth/login?login_request_id=lr%201\""));
  BOOST_TEST(contains(r.body, "a@example.com"));

  pages::LinkView l{"TOKEN", "tok", "a@example.com", "Todo", {"https://client.example"}};
  auto link = pages::link_page(l);
  check_page_headers(link, "https://client.example");
  BOOST_TEST(contains(link.body, "action=\"/oauth/login/link\""));
  BOOST_TEST(contains(link.body, "name=\"token\" value=\"TOKEN\""));
}

BOOST_AUTO_TEST_CASE(consent_page_names_client_scopes_and_redirect_host) {
  pages::ConsentView v;
  v.login_request_id = "lr-2";
  v.csrf_token = "c2";
  v.signed_in_as = "me@example.com";
  v.screen.resource_name = "Todo Server";
  v.screen.client_name = "Evil <b>Client</b>";
  v.screen.client_host = "client.example";
  v.screen.redirect_host = "127.0.0.1";
  v.screen.redirect_is_localhost = true;
  v.screen.scopes = {{"todo:read", "Read your <todos>"}, {"todo:write", ""}};
  v.form_targets = {"http://127.0.0.1:4000"};
  auto r = pages::consent_page(v);
  BOOST_TEST(r.status == 200);
  check_page_headers(r, "http://127.0.0.1:4000");
  BOOST_TEST(contains(r.body,
                      "<bdi>Evil &lt;b&gt;Client&lt;/b&gt;</bdi> wants to access "
                      "<bdi>Todo Server</bdi>"));
  BOOST_TEST(contains(r.body, "(client.example)"));
  BOOST_TEST(contains(r.body, "<bdi class=\"host\">127.0.0.1</bdi>"));
  BOOST_TEST(contains(r.body, "class=\"warning\""));
  BOOST_TEST(contains(r.body, "Read your &lt;todos&gt;"));
  BOOST_TEST(contains(r.body, "todo:write"));
  BOOST_TEST(contains(r.body, "me@example.com"));
  BOOST_TEST(contains(r.body, "action=\"/oauth/consent\""));
  BOOST_TEST(contains(r.body, "name=\"decision\" value=\"allow\""));
  BOOST_TEST(contains(r.body, "name=\"decision\" value=\"deny\""));
  BOOST_TEST(!contains(r.body, "autofocus"));

  v.screen.redirect_is_localhost = false;
  v.screen.client_name = "";
  v.screen.scopes.clear();
  auto plain = pages::consent_page(v);
  BOOST_TEST(!contains(plain.body, "class=\"warning\""));
  BOOST_TEST(contains(plain.body, "An unnamed application"));
  BOOST_TEST(contains(plain.body, "no specific permissions"));
}
