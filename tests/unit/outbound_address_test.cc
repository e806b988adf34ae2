#define BOOST_TEST_MODULE outbound_address
#include <arpa/inet.h>
#include <netinet/in.h>

#include <boost/test/unit_test.hpp>
#include <string>

#include "outbound/address.h"

using namespace portcullis::outbound;

namespace {

std::string block_of(const std::string& text) {
  auto a = parse_ip(text);
  BOOST_REQUIRE_MESSAGE(a, "not an address: " << text);
  return std::string(special_use_block(*a));
}

// A special-use block given by its first and last address and the ordinary addresses just
// outside it (empty when the neighbour is itself special).
struct Range {
  const char* first;
  const char* last;
  const char* before;
  const char* after;
  const char* name;
};

template <size_t N>
void check_ranges(const Range (&ranges)[N]) {
  for (const Range& r : ranges) {
    BOOST_TEST(block_of(r.first) == r.name, r.first);
    BOOST_TEST(block_of(r.last) == r.name, r.last);
    if (*r.before) BOOST_TEST(block_of(r.before).empty(), r.before);
    if (*r.after) BOOST_TEST(block_of(r.after).empty(), r.after);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_ipv4_block_and_its_boundaries) {
  const Range ranges[] = {
      {"0.0.0.0", "0.255.255.255", "", "1.0.0.0", "this network"},
      {"10.0.0.0", "10.255.255.255", "9.255.255.255", "11.0.0.0", "private-use"},
      {"100.64.0.0", "100.127.255.255", "100.63.255.255", "100.128.0.0",
       "shared address space (CGNAT)"},
      {"127.0.0.0", "127.255.255.255", "126.255.255.255", "128.0.0.0", "loopback"},
      {"169.254.0.0", "169.254.255.255", "169.253.255.255", "169.255.0.0", "link-local"},
      {"172.16.0.0", "172.31.255.255", "172.15.255.255", "172.32.0.0", "private-use"},
      {"192.0.0.0", "192.0.0.255", "191.255.255.255", "192.0.1.0", "IETF protocol assignments"},
      {"192.0.2.0", "192.0.2.255", "192.0.1.255", "192.0.3.0", "documentation (TEST-NET-1)"},
      {"192.88.99.0", "192.88.99.255", "192.88.98.255", "192.88.100.0", "6to4 relay anycast"},
      {"192.168.0.0", "192.168.255.255", "192.167.255.255", "192.169.0.0", "private-use"},
      {"198.18.0.0", "198.19.255.255", "198.17.255.255", "198.20.0.0", "benchmarking"},
      {"198.51.100.0", "198.51.100.255", "198.51.99.255", "198.51.101.0",
       "documentation (TEST-NET-2)"},
      {"203.0.113.0", "203.0.113.255", "203.0.112.255", "203.0.114.0",
       "documentation (TEST-NET-3)"},
      {"224.0.0.0", "239.255.255.255", "223.255.255.255", "", "multicast"},
      {"240.0.0.0", "255.255.255.254", "", "", "reserved"},
      {"255.255.255.255", "255.255.255.255", "", "", "limited broadcast"},
  };
  check_ranges(ranges);
  for (const char* global : {"1.1.1.1", "8.8.8.8", "93.184.216.34", "223.255.255.255"}) {
    BOOST_TEST(block_of(global).empty(), global);
  }
}

BOOST_AUTO_TEST_CASE(every_ipv6_block_and_its_boundaries) {
  const Range ranges[] = {
      {"::1", "::1", "", "", "loopback"},
      {"::", "::", "", "", "unspecified"},
      {"64:ff9b::", "64:ff9b::ffff:ffff", "", "", "NAT64"},
      {"64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "", "", "local-use NAT64"},
      {"100::", "100::ffff:ffff:ffff:ffff", "", "", "discard-only"},
      {"2001::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",
       "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:200::", "IETF protocol assignments"},
      {"2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
       "2001:db7:ffff::", "2001:db9::", "documentation"},
      {"2002::", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:ffff::", "2003::", "6to4"},
      {"3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",
       "3ffe:ffff::", "3fff:1000::", "documentation"},
      {"fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "", "", "unique local"},
      {"fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "", "", "link-local"},
      {"fec0::", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "", "", "site-local (deprecated)"},
      {"ff00::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "", "", "multicast"},
  };
  check_ranges(ranges);
  // Only 2000::/3 is global unicast: the rest is refused even where no block is named.
  for (const char* outside : {"::2", "::127.0.0.1", "::ffff:0:127.0.0.1", "5f00::1", "1fff::1",
                              "4000::1", "fbff::1", "64:ff9a::1"}) {
    BOOST_TEST(block_of(outside) == "not global unicast", outside);
  }
  for (const char* global : {"2000::1", "2606:4700::1111", "2a00:1450:4001::200e",
                             "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2620:4f:8000::1"}) {
    BOOST_TEST(block_of(global).empty(), global);
  }
}

BOOST_AUTO_TEST_CASE(v4_mapped_ipv6_is_judged_by_its_ipv4_address) {
  BOOST_TEST(block_of("::ffff:127.0.0.1") == "loopback");
  BOOST_TEST(block_of("::ffff:7f00:1") == "loopback");
  BOOST_TEST(block_of("::ffff:10.1.2.3") == "private-use");
  BOOST_TEST(block_of("::ffff:169.254.169.254") == "link-local");
  BOOST_TEST(block_of("::ffff:0.0.0.0") == "this network");
  BOOST_TEST(block_of("::ffff:93.184.216.34").empty());
  BOOST_TEST(block_of("::ffff:8.8.8.8").empty());
}

BOOST_AUTO_TEST_CASE(only_unambiguous_literals_parse) {
  for (const char* ok : {"1.2.3.4", "0.0.0.0", "255.255.255.255", "::1", "2001:db8::1",
                         "::ffff:1.2.3.4", "FE80::1"}) {
    BOOST_TEST(parse_ip(ok).has_value(), ok);
  }
  for (const char* bad : {"", "127.1", "127.0.1", "0x7f.0.0.1", "0177.0.0.1", "010.0.0.1",
                          "2130706433", "1.2.3.4.5", "256.1.1.1", "1.2.3.4 ", " 1.2.3.4", "[::1]",
                          "fe80::1%eth0", "fe80::1%251", "::1::", "localhost"}) {
    BOOST_TEST(!parse_ip(bad).has_value(), bad);
  }
  BOOST_TEST(!parse_ip(std::string("1.2.3.4\0", 8)).has_value());
}

BOOST_AUTO_TEST_CASE(sockaddr_and_text_round_trip) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  ::inet_pton(AF_INET, "203.0.113.7", &in.sin_addr);
  auto a = from_sockaddr(reinterpret_cast<sockaddr*>(&in));
  BOOST_REQUIRE(a);
  BOOST_TEST(to_string(*a) == "203.0.113.7");
  BOOST_TEST((*a == *parse_ip("203.0.113.7")));
  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  ::inet_pton(AF_INET6, "2001:db8::5", &in6.sin6_addr);
  auto b = from_sockaddr(reinterpret_cast<sockaddr*>(&in6));
  BOOST_REQUIRE(b);
  BOOST_TEST(to_string(*b) == "2001:db8::5");
  BOOST_TEST(!(*a == *b));
  sockaddr other{};
  other.sa_family = AF_UNIX;
  BOOST_TEST(!from_sockaddr(&other).has_value());
  BOOST_TEST(!from_sockaddr(nullptr).has_value());
}
