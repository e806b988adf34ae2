#define BOOST_TEST_MODULE domains
#include <boost/test/unit_test.hpp>
#include <string>

#include "domains/domain_name.h"

using namespace portcullis;
using namespace portcullis::domains;

BOOST_AUTO_TEST_CASE(domains_are_stored_in_lowercase) {
  auto d = normalize_domain("Mail.Example.COM");
  BOOST_REQUIRE(d.is_ok());
  BOOST_TEST(*d == "mail.example.com");
}

BOOST_AUTO_TEST_CASE(a_labels_and_ordinary_names_are_accepted) {
  for (const char* ok : {"example.com", "xn--bcher-kva.example", "xn--bcher-kva.ch",
                         "a-b.c-d.example.org", "1password.com", "x.io", "xn--fiqs8s.xn--fiqz9s"}) {
    auto d = normalize_domain(ok);
    // .example is special-use: only the ones under real TLDs pass.
    if (std::string(ok).ends_with(".example")) {
      BOOST_TEST(!d.is_ok(), ok);
    } else {
      BOOST_TEST(d.is_ok(), ok << ": " << d.status().message());
    }
  }
}

BOOST_AUTO_TEST_CASE(bad_domains_are_refused_with_a_reason) {
  std::string label63(63, 'a');
  std::string too_long;
  while (too_long.size() <= kMaxDomainBytes) too_long += label63 + ".";
  too_long += "com";
  for (const std::string& bad : {std::string(),
                                 std::string("com"),
                                 std::string("localhost"),
                                 std::string("example.com."),
                                 std::string(".example.com"),
                                 std::string("a..example.com"),
                                 std::string("-a.example.com"),
                                 std::string("a-.example.com"),
                                 std::string("ab--c.example.com"),
                                 std::string("exa mple.com"),
                                 std::string("exa_mple.com"),
                                 std::string("b\xC3\xBC"
                                             "cher.ch"),
                                 std::string("192.0.2.1"),
                                 std::string("[2001:db8::1]"),
                                 std::string("2001:db8::1"),
                                 std::string("host.localhost"),
                                 std::string("printer.local"),
                                 std::string("x.invalid"),
                                 std::string("x.test"),
                                 std::string("x.onion"),
                                 std::string("1.2.in-addr.arpa"),
                                 std::string(label63 + "a.com"),
                                 too_long,
                                 std::string("user@example.com"),
                                 std::string("example.com/path")}) {
    auto d = normalize_domain(bad);
    BOOST_TEST(!d.is_ok(), bad);
    if (!d.is_ok()) {
      BOOST_TEST(d.status().code() == Code::kInvalidArgument);
      BOOST_TEST(!d.status().message().empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(the_longest_domain_still_fits_its_verification_record_name) {
  std::string d;
  while (d.size() + 64 < kMaxDomainBytes) d += std::string(63, 'a') + ".";
  d += std::string(kMaxDomainBytes - d.size() - 4, 'b') + ".com";
  BOOST_REQUIRE(d.size() == kMaxDomainBytes);
  BOOST_TEST(normalize_domain(d).is_ok());
  BOOST_TEST(verification_record_name(d).size() == 253u);
  BOOST_TEST(!normalize_domain("a" + d).is_ok());
}

BOOST_AUTO_TEST_CASE(the_verification_record) {
  BOOST_TEST(verification_record_name("example.com") == "_portcullis-verification.example.com");
  BOOST_TEST(verification_record_value("tok") == "portcullis-verification=tok");
}
