#define BOOST_TEST_MODULE dns
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "dns/nameserver.h"
#include "dns/txt_lookup.h"
#include "dns/txt_response.h"

using namespace portcullis;
using namespace portcullis::dns;

namespace {

const std::string kName = "_portcullis-verification.example.com";

std::string u16(uint16_t v) {
  return std::string{static_cast<char>(v >> 8), static_cast<char>(v & 0xFF)};
}

std::string wire_name(const std::string& dotted) {
  std::string out;
  size_t start = 0;
  while (start <= dotted.size()) {
    size_t dot = dotted.find('.', start);
    if (dot == std::string::npos) dot = dotted.size();
    out += static_cast<char>(dot - start);
    out += dotted.substr(start, dot - start);
    start = dot + 1;
  }
  return out + '\0';
}

// A response to one TXT question for kName; `answers` are appended as given.
std::string response(int rcode, uint16_t ancount, const std::string& answers,
                     uint16_t flags = 0x8180) {
  return u16(0x1234) + u16(static_cast<uint16_t>(flags | rcode)) + u16(1) + u16(ancount) + u16(0) +
         u16(0) + wire_name(kName) + u16(16) + u16(1) + answers;
}

std::string record(const std::string& owner, uint16_t type, const std::string& rdata,
                   uint16_t klass = 1) {
  return owner + u16(type) + u16(klass) + std::string("\0\0\1\0", 4) +
         u16(static_cast<uint16_t>(rdata.size())) + rdata;
}

std::string strings(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += static_cast<char>(p.size()) + p;
  return out;
}

const std::string kToQuestion("\xC0\x0C", 2);  // a pointer to the question's name

}  // namespace

BOOST_AUTO_TEST_CASE(reads_txt_records_and_joins_their_strings) {
  auto msg = response(0, 2,
                      record(kToQuestion, 16, strings({"portcullis-", "verification=abc"})) +
                          record(kToQuestion, 16, strings({"v=spf1 -all"})));
  auto r = parse_txt_response(msg, kName);
  BOOST_REQUIRE(r.is_ok());
  BOOST_TEST(r->rcode == kRcodeNoError);
  BOOST_REQUIRE(r->records.size() == 2u);
  BOOST_TEST(r->records[0] == "portcullis-verification=abc");
  BOOST_TEST(r->records[1] == "v=spf1 -all");
}

BOOST_AUTO_TEST_CASE(names_compare_case_insensitively_and_ignore_a_trailing_dot) {
  auto msg =
      response(0, 1, record(wire_name("_Portcullis-Verification.EXAMPLE.com"), 16, strings({"x"})));
  auto r = parse_txt_response(msg, "_portcullis-verification.example.com.");
  BOOST_REQUIRE(r.is_ok());
  BOOST_TEST(r->records.size() == 1u);
}

BOOST_AUTO_TEST_CASE(records_of_other_names_types_and_classes_are_ignored) {
  auto msg = response(0, 4,
                      record(wire_name("other.example.com"), 16, strings({"no"})) +
                          record(kToQuestion, 1, std::string("\x7f\0\0\1", 4)) +
                          record(kToQuestion, 16, strings({"chaos"}), 3) +
                          record(kToQuestion, 16, strings({"yes"})));
  auto r = parse_txt_response(msg, kName);
  BOOST_REQUIRE(r.is_ok());
  BOOST_REQUIRE(r->records.size() == 1u);
  BOOST_TEST(r->records[0] == "yes");
}

BOOST_AUTO_TEST_CASE(follows_a_cname_to_the_records_of_its_target) {
  std::string target = wire_name("verify.example.net");
  std::string first = record(kToQuestion, 5, target);
  // The TXT owner points at the CNAME's target name inside the first record's data.
  size_t target_at = response(0, 0, "").size() + first.size() - target.size();
  std::string pointer = u16(static_cast<uint16_t>(0xC000 | target_at));
  auto msg = response(0, 2, first + record(pointer, 16, strings({"portcullis-verification=t"})));
  auto r = parse_txt_response(msg, kName);
  BOOST_REQUIRE(r.is_ok());
  BOOST_REQUIRE(r->records.size() == 1u);
  BOOST_TEST(r->records[0] == "portcullis-verification=t");
}

BOOST_AUTO_TEST_CASE(nxdomain_and_no_data_have_no_records) {
  auto nx = parse_txt_response(response(kRcodeNxDomain, 0, ""), kName);
  BOOST_REQUIRE(nx.is_ok());
  BOOST_TEST(nx->rcode == kRcodeNxDomain);
  BOOST_TEST(nx->records.empty());
  auto empty = parse_txt_response(response(0, 0, ""), kName);
  BOOST_REQUIRE(empty.is_ok());
  BOOST_TEST(empty->records.empty());
}

BOOST_AUTO_TEST_CASE(the_truncation_bit_is_reported) {
  auto r = parse_txt_response(response(0, 0, "", 0x8380), kName);
  BOOST_REQUIRE(r.is_ok());
  BOOST_TEST(r->truncated);
}

BOOST_AUTO_TEST_CASE(malformed_messages_are_refused) {
  std::string good = response(0, 1, record(kToQuestion, 16, strings({"abc"})));
  std::vector<std::string> bad = {
      "",
      std::string(11, '\0'),
      response(0, 0, "", 0x0100),  // a query, not a response
      good.substr(0, good.size() - 1),
      response(0, 1,
               record(kToQuestion, 16,
                      std::string("\x05"
                                  "ab",
                                  3))),                                        // string too long
      response(0, 1, record(kToQuestion, 16, "")),                             // no strings
      response(0, 1, record(std::string("\xC0\xFF", 2), 16, strings({"x"}))),  // pointer forward
      response(0, 1, record(std::string("\x80x", 2), 16, strings({"x"}))),     // reserved label
      response(0, 2, record(kToQuestion, 16, strings({"x"}))),                 // missing answer
  };
  for (const auto& msg : bad) {
    auto r = parse_txt_response(msg, kName);
    BOOST_TEST(!r.is_ok());
    if (!r.is_ok()) BOOST_TEST(r.status().message().find("malformed DNS response") == 0u);
  }
}

BOOST_AUTO_TEST_CASE(a_pointer_loop_ends) {
  // The answer's owner is a pointer to a pointer to itself.
  std::string head = response(0, 1, "");
  uint16_t here = static_cast<uint16_t>(head.size());
  std::string msg = head + u16(static_cast<uint16_t>(0xC000 | here));
  msg += u16(16) + u16(1) + std::string("\0\0\1\0", 4) + u16(2) + strings({"x"});
  BOOST_TEST(!parse_txt_response(msg, kName).is_ok());
}

BOOST_AUTO_TEST_CASE(names_longer_than_255_bytes_are_refused) {
  std::string label(63, 'a');
  std::string long_name = wire_name(label + "." + label + "." + label + "." + label + ".com");
  auto r = parse_txt_response(response(0, 1, record(long_name, 16, strings({"x"}))), kName);
  BOOST_TEST(!r.is_ok());
}

BOOST_AUTO_TEST_CASE(nameservers_are_ipv4_with_an_optional_port) {
  auto system = parse_nameserver("");
  BOOST_REQUIRE(system.is_ok());
  BOOST_TEST(system->is_system());
  auto plain = parse_nameserver("192.0.2.53");
  BOOST_REQUIRE(plain.is_ok());
  BOOST_TEST(plain->port == 53);
  auto with_port = parse_nameserver("127.0.0.1:19053");
  BOOST_REQUIRE(with_port.is_ok());
  BOOST_TEST(with_port->describe() == "127.0.0.1:19053");
  for (const char* bad : {"localhost", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
                          "127.0.0.1:53x", "::1", "[::1]:53", "127.1"}) {
    BOOST_TEST(!parse_nameserver(bad).is_ok(), bad);
  }
}

BOOST_AUTO_TEST_CASE(a_nameserver_nobody_listens_on_is_a_clear_unavailable) {
  // Port 9 (discard) on loopback: nothing listens in the test environment, so the kernel
  // answers the UDP query with port unreachable at once.
  auto r = lookup_txt(*parse_nameserver("127.0.0.1:9"), kName);
  BOOST_REQUIRE(!r.is_ok());
  BOOST_TEST(r.status().code() == Code::kUnavailable);
  BOOST_TEST(r.status().message().find("127.0.0.1:9") != std::string::npos);
}
