#define BOOST_TEST_MODULE redirect_uri
#include "clients/redirect_uri.h"

#include <boost/test/unit_test.hpp>

using namespace portcullis::oauth;

BOOST_AUTO_TEST_CASE(registration_accepts_the_three_kinds) {
  for (const char* ok :
       {"https://app.example.com/callback", "https://app.example.com:8443/cb?x=1",
        "http://localhost/callback", "http://localhost:3000/callback", "http://127.0.0.1:8080/cb",
        "http://[::1]:9000/cb", "com.example.app:/oauth2redirect", "com.example.app:///cb"}) {
    BOOST_TEST(validate_redirect_uri(ok).is_ok(), ok);
  }
}

BOOST_AUTO_TEST_CASE(registration_refuses_the_dangerous_ones) {
  for (const char* bad : {"",
                          "http://app.example.com/cb",
                          "https://app.example.com/cb#frag",
                          "https://*.example.com/cb",
                          "https://app.example.com/*",
                          "https://user@app.example.com/cb",
                          "https://u:p@app.example.com/cb",
                          "https://evil.com@app.example.com/cb",
                          "javascript:alert(1)",
                          "JavaScript:alert(1)",
                          "data:text/html,x",
                          "file:///etc/passwd",
                          "https://app.example.com/a/../b",
                          "https://app.example.com/a/..;/b",
                          "https://app.example.com/%2e%2e/b",
                          "https://app.example.com/./b",
                          "https://app.example.com/ cb",
                          "https://app.example.com\\@evil.com/",
                          "HTTPS://app.example.com/cb",
                          "https://APP.example.com/cb",
                          "myapp:/cb",
                          "https:///cb",
                          "/relative/cb",
                          "https://app.example.com:99999/cb",
                          "http://localhost.evil.com/cb",
                          "http://127.0.0.2/cb"}) {
    auto st = validate_redirect_uri(bad);
    BOOST_TEST(!st.is_ok(), bad);
    BOOST_TEST(st.reason() == "invalid_redirect_uri", bad);
  }
  BOOST_TEST(!validate_redirect_uri("https://a.example/" + std::string(2000, 'x')).is_ok());
}

BOOST_AUTO_TEST_CASE(matching_is_exact_except_the_loopback_port) {
  BOOST_TEST(redirect_uri_matches("https://a.example/cb", "https://a.example/cb"));
  BOOST_TEST(!redirect_uri_matches("https://a.example/cb", "https://a.example/cb/"));
  BOOST_TEST(!redirect_uri_matches("https://a.example/cb", "https://a.example/CB"));
  BOOST_TEST(!redirect_uri_matches("https://a.example/cb", "https://a.example:443/cb"));
  BOOST_TEST(!redirect_uri_matches("https://a.example/cb?x=1", "https://a.example/cb?x=2"));
  BOOST_TEST(!redirect_uri_matches("https://a.example/cb", "http://a.example/cb"));
  // RFC 8252 §7.3: any port on a loopback redirect, everything else exact.
  BOOST_TEST(
      redirect_uri_matches("http://127.0.0.1:3000/callback", "http://127.0.0.1:54321/callback"));
  BOOST_TEST(redirect_uri_matches("http://127.0.0.1/callback", "http://127.0.0.1:54321/callback"));
  BOOST_TEST(redirect_uri_matches("http://localhost/callback", "http://localhost:8090/callback"));
  BOOST_TEST(redirect_uri_matches("http://[::1]:1/cb", "http://[::1]:2/cb"));
  BOOST_TEST(
      !redirect_uri_matches("http://127.0.0.1:3000/callback", "http://localhost:3000/callback"));
  BOOST_TEST(
      !redirect_uri_matches("http://localhost:3000/callback", "http://127.0.0.1:3000/callback"));
  BOOST_TEST(
      !redirect_uri_matches("http://127.0.0.1:3000/callback", "http://127.0.0.1:3000/other"));
  BOOST_TEST(!redirect_uri_matches("http://127.0.0.1:3000/cb?a=1", "http://127.0.0.1:4000/cb?a=2"));
  BOOST_TEST(!redirect_uri_matches("http://127.0.0.1:3000/cb", "http://evil@127.0.0.1:3000/cb"));
  BOOST_TEST(!redirect_uri_matches("https://localhost:3000/cb", "https://localhost:4000/cb"));
  BOOST_TEST(uri_host("https://app.example.com:8443/cb") == "app.example.com");
  BOOST_TEST(uri_host("http://[::1]:9/cb") == "[::1]");
  BOOST_TEST(is_loopback_redirect("http://localhost:1/cb"));
  BOOST_TEST(!is_loopback_redirect("https://localhost:1/cb"));
}
