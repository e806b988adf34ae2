#define BOOST_TEST_MODULE uri
#include "clients/uri.h"

#include <boost/test/unit_test.hpp>

using namespace portcullis::oauth;

BOOST_AUTO_TEST_CASE(splits_scheme_authority_and_rest) {
  auto p = parse_uri("https://user@Example.COM:8443/a/b?x=1#f");
  BOOST_REQUIRE(p.has_value());
  BOOST_TEST(p->scheme == "https");
  BOOST_TEST(p->has_authority);
  BOOST_TEST(p->has_userinfo);
  BOOST_TEST(p->host == "Example.COM");  // as written: callers decide about case
  BOOST_TEST(p->port == "8443");
  BOOST_TEST(p->rest == "/a/b?x=1#f");

  auto v6 = parse_uri("http://[::1]:3000/cb");
  BOOST_REQUIRE(v6.has_value());
  BOOST_TEST(v6->host == "[::1]");
  BOOST_TEST(v6->port == "3000");

  auto custom = parse_uri("com.example.app:/cb");
  BOOST_REQUIRE(custom.has_value());
  BOOST_TEST(!custom->has_authority);
  BOOST_TEST(custom->rest == "/cb");
}

BOOST_AUTO_TEST_CASE(the_authority_ends_at_a_fragment_or_query) {
  auto frag = parse_uri("https://a.example#@evil.example/");
  BOOST_REQUIRE(frag.has_value());
  BOOST_TEST(frag->host == "a.example");
  BOOST_TEST(!frag->has_userinfo);
  auto query = parse_uri("https://a.example?x=@evil.example");
  BOOST_REQUIRE(query.has_value());
  BOOST_TEST(query->host == "a.example");
}

BOOST_AUTO_TEST_CASE(refuses_what_it_cannot_split) {
  for (const char* bad : {"", ":x", "no-scheme", "https://[::1/x", "https://h:port/",
                          "https://h:65536/", "https://h:123456/"}) {
    BOOST_TEST(!parse_uri(bad).has_value(), bad);
  }
}

BOOST_AUTO_TEST_CASE(loopback_hosts_are_exactly_three) {
  BOOST_TEST(is_loopback_host("localhost"));
  BOOST_TEST(is_loopback_host("127.0.0.1"));
  BOOST_TEST(is_loopback_host("[::1]"));
  BOOST_TEST(!is_loopback_host("LOCALHOST"));
  BOOST_TEST(!is_loopback_host("127.0.0.2"));
  BOOST_TEST(!is_loopback_host("localhost.example"));
}
