// lib/runtime/fastcgi_records: the FastCGI reader and the response records, byte by byte, against
// the records the test client (fcgi_client.h, nginx's part) builds and parses.
#define BOOST_TEST_MODULE fastcgi_records
#include "runtime/fastcgi_records.h"

#include <boost/test/unit_test.hpp>
#include <map>
#include <ostream>
#include <string>

#include "fcgi_client.h"
#include "http/fastcgi.h"

namespace fcgi = portcullis::test::fcgi;
namespace rec = portcullis::runtime::fastcgi;
using Next = rec::Reader::Next;

namespace portcullis::runtime::fastcgi {
// For Boost.Test's messages.
std::ostream& operator<<(std::ostream& out, Reader::Next next) {
  return out << static_cast<int>(next);
}
}  // namespace portcullis::runtime::fastcgi

namespace {

const std::map<std::string, std::string> kParams{
    {"REQUEST_METHOD", "POST"}, {"DOCUMENT_URI", "/oauth/token"}, {"CONTENT_LENGTH", "5"}};

// The records the application sent, parsed as the test client parses a response.
portcullis::test::FcgiResponse parse_answer(std::string bytes) {
  portcullis::test::FcgiResponse r;
  portcullis::test::consume_records(&bytes, &r);
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_request_fed_byte_by_byte_is_complete_only_at_its_last_byte) {
  const std::string bytes = fcgi::request_bytes(kParams, "hello", fcgi::kKeepConn, 7);
  rec::Reader reader;
  BOOST_TEST(reader.idle());
  for (std::size_t i = 0; i + 1 < bytes.size(); ++i) {
    reader.feed(bytes.substr(i, 1));
    BOOST_REQUIRE(reader.next() == Next::kNeedMore);
    BOOST_TEST(!reader.idle());
  }
  reader.feed(bytes.substr(bytes.size() - 1));
  BOOST_REQUIRE(reader.next() == Next::kRequest);
  rec::Request r = reader.take_request();
  BOOST_TEST(r.id == 7);
  BOOST_TEST(r.keep_conn);
  BOOST_TEST(r.body == "hello");
  BOOST_TEST(!r.body_overflow);
  BOOST_TEST(r.params.size() == 3u);
  BOOST_TEST(*r.param("DOCUMENT_URI") == "/oauth/token");
  BOOST_TEST(r.param("QUERY_STRING") == nullptr);
  BOOST_TEST(reader.idle());
  BOOST_TEST(reader.next() == Next::kNeedMore);
  BOOST_TEST(reader.pending_output().empty());
}

BOOST_AUTO_TEST_CASE(requests_follow_each_other_on_one_connection) {
  rec::Reader reader;
  reader.feed(fcgi::request_bytes({{"QUERY_STRING", "a=1"}}, "", fcgi::kKeepConn, 1) +
              fcgi::request_bytes({{"QUERY_STRING", "a=2"}}, "", 0, 2));
  BOOST_REQUIRE(reader.next() == Next::kRequest);
  BOOST_TEST(*reader.take_request().param("QUERY_STRING") == "a=1");
  BOOST_REQUIRE(reader.next() == Next::kRequest);
  rec::Request second = reader.take_request();
  BOOST_TEST(*second.param("QUERY_STRING") == "a=2");
  BOOST_TEST(!second.keep_conn);
}

BOOST_AUTO_TEST_CASE(long_names_and_values_use_four_byte_lengths_and_long_streams_many_records) {
  const std::string long_value(70000, 'v');  // over one record: PARAMS split in two
  const std::string body(200000, 'b');       // STDIN in four records
  rec::Reader reader;
  reader.feed(fcgi::request_bytes({{std::string(200, 'N'), long_value}}, body));
  BOOST_REQUIRE(reader.next() == Next::kRequest);
  rec::Request r = reader.take_request();
  BOOST_TEST(*r.param(std::string(200, 'N')) == long_value);
  BOOST_TEST(r.body == body);
}

BOOST_AUTO_TEST_CASE(a_body_over_the_limit_is_dropped_and_flagged) {
  rec::Limits limits;
  limits.max_body_bytes = 10;
  rec::Reader reader(limits);
  reader.feed(fcgi::request_bytes({}, std::string(25, 'x')));
  BOOST_REQUIRE(reader.next() == Next::kRequest);
  rec::Request r = reader.take_request();
  BOOST_TEST(r.body == std::string(10, 'x'));
  BOOST_TEST(r.body_overflow);
}

BOOST_AUTO_TEST_CASE(params_over_the_limit_end_the_connection) {
  rec::Limits limits;
  limits.max_params_bytes = 100;
  rec::Reader reader(limits);
  reader.feed(fcgi::request_bytes({{"X", std::string(200, 'y')}}, ""));
  BOOST_TEST(reader.next() == Next::kClose);
  BOOST_TEST(!reader.close_reason().empty());
  reader.feed(fcgi::request_bytes({}, ""));  // nothing more is read
  BOOST_TEST(reader.next() == Next::kClose);
}

BOOST_AUTO_TEST_CASE(protocol_errors_end_the_connection) {
  std::string huge_pair = "\xff\xff\xff\xff";  // a name of 0x7fffffff bytes
  huge_pair += '\x01';
  huge_pair += "ab";
  const std::string begin = fcgi::begin_request();
  const std::map<std::string, std::string> cases{
      {"wrong version", fcgi::header(fcgi::kBeginRequest, 1, 8, 0, 9) + std::string(8, '\0')},
      {"BEGIN_REQUEST too short", fcgi::record(fcgi::kBeginRequest, 1, "abc")},
      {"BEGIN_REQUEST with id 0", fcgi::begin_request(0)},
      {"the same request begun twice", begin + begin},
      {"a pair longer than its stream", begin + fcgi::stream(fcgi::kParams, 1, huge_pair)},
      {"a pair cut in its length", begin + fcgi::stream(fcgi::kParams, 1, "\x85\x01")},
      {"STDIN before the end of PARAMS", begin + fcgi::record(fcgi::kStdin, 1, "x")},
      {"PARAMS after their end", begin + fcgi::stream(fcgi::kParams, 1, "") +
                                     fcgi::record(fcgi::kParams, 1,
                                                  "\x01\x01"
                                                  "ab")},
      {"malformed GET_VALUES", fcgi::record(fcgi::kGetValues, 0, "\x05")},
  };
  for (const auto& [name, bytes] : cases) {
    rec::Reader reader;
    reader.feed(bytes);
    BOOST_TEST((reader.next() == Next::kClose), name);
  }
}

BOOST_AUTO_TEST_CASE(refused_requests_are_answered_as_the_specification_asks) {
  {  // another role: FCGI_UNKNOWN_ROLE, then the connection ends unless it is to be kept
    rec::Reader reader;
    reader.feed(fcgi::begin_request(3, fcgi::kAuthorizer));
    BOOST_TEST(reader.next() == Next::kClose);
    auto r = parse_answer(reader.pending_output());
    BOOST_TEST(r.ok);
    BOOST_TEST(r.protocol_status == 3);
  }
  {
    rec::Reader reader;
    reader.feed(fcgi::begin_request(3, fcgi::kFilter, fcgi::kKeepConn) +
                fcgi::request_bytes({}, "", 0, 4));
    BOOST_TEST(reader.next() == Next::kRequest);
    BOOST_TEST(reader.take_request().id == 4);
    BOOST_TEST(parse_answer(reader.pending_output()).protocol_status == 3);
  }
  {  // a second request while one is open: FCGI_CANT_MPX_CONN, and the first goes on
    rec::Reader reader;
    reader.feed(fcgi::begin_request(1) + fcgi::begin_request(2) +
                fcgi::stream(fcgi::kParams, 1, "") + fcgi::stream(fcgi::kStdin, 1, ""));
    BOOST_TEST(reader.next() == Next::kRequest);
    BOOST_TEST(reader.take_request().id == 1);
    std::string out = reader.pending_output();
    BOOST_TEST(out.size() == 16u);
    BOOST_TEST(static_cast<int>(out[3]) == 2);  // request id 2
    BOOST_TEST(parse_answer(out).protocol_status == 1);
  }
}

BOOST_AUTO_TEST_CASE(an_aborted_request_is_ended_and_never_served) {
  rec::Reader kept;
  kept.feed(fcgi::begin_request(5, fcgi::kResponder, fcgi::kKeepConn) +
            fcgi::record(fcgi::kAbortRequest, 5, "") + fcgi::request_bytes({}, "", 0, 6));
  BOOST_TEST(kept.next() == Next::kRequest);
  BOOST_TEST(kept.take_request().id == 6);
  auto r = parse_answer(kept.pending_output());
  BOOST_TEST(r.ok);
  BOOST_TEST(r.protocol_status == 0);

  rec::Reader once;
  once.feed(fcgi::begin_request(5) + fcgi::record(fcgi::kAbortRequest, 5, ""));
  BOOST_TEST(once.next() == Next::kClose);
  BOOST_TEST(parse_answer(once.pending_output()).ok);
}

BOOST_AUTO_TEST_CASE(management_records_are_answered) {
  rec::Reader reader;
  std::string asked;
  for (std::string name : {"FCGI_MPXS_CONNS", "FCGI_MAX_CONNS", "FCGI_MAX_REQS"}) {
    fcgi::append_length(asked, name.size());
    fcgi::append_length(asked, 0);
    asked += name;
  }
  reader.feed(fcgi::record(fcgi::kGetValues, 0, asked) + fcgi::record(42, 0, "zz"));
  BOOST_TEST(reader.next() == Next::kNeedMore);
  BOOST_TEST(reader.idle());
  const std::string& out = reader.pending_output();
  BOOST_REQUIRE(out.size() > 8u);
  BOOST_TEST(static_cast<int>(out[1]) == fcgi::kGetValuesResult);
  const std::size_t len =
      (static_cast<unsigned char>(out[4]) << 8) | static_cast<unsigned char>(out[5]);
  const std::string result = out.substr(8, len);
  BOOST_TEST(result.find("FCGI_MPXS_CONNS0") != std::string::npos);
  BOOST_TEST(result.find("FCGI_MAX_REQS1") != std::string::npos);
  BOOST_TEST(result.find("FCGI_MAX_CONNS") == std::string::npos);
  const std::string unknown = out.substr(8 + len);
  BOOST_REQUIRE(unknown.size() == 16u);
  BOOST_TEST(static_cast<int>(unknown[1]) == fcgi::kUnknownType);
  BOOST_TEST(static_cast<int>(unknown[8]) == 42);
}

BOOST_AUTO_TEST_CASE(records_of_no_open_request_are_ignored) {
  rec::Reader reader;
  reader.feed(fcgi::record(fcgi::kStdin, 9, "stray") + fcgi::record(fcgi::kParams, 9, "x") +
              fcgi::record(fcgi::kData, 1, "d") + fcgi::request_bytes({{"A", "1"}}, "ok"));
  BOOST_REQUIRE(reader.next() == Next::kRequest);
  rec::Request r = reader.take_request();
  BOOST_TEST(r.body == "ok");
  BOOST_TEST(*r.param("A") == "1");
}

BOOST_AUTO_TEST_CASE(a_response_is_stdout_records_then_the_end_of_the_request) {
  for (std::size_t size :
       {std::size_t{0}, std::size_t{10}, std::size_t{65535}, std::size_t{200001}}) {
    std::string cgi = "Status: 200 OK\r\n\r\n" + std::string(size, 'r');
    std::string wire;
    rec::append_response(wire, 3, cgi);
    portcullis::test::FcgiResponse r;
    BOOST_TEST(portcullis::test::consume_records(&wire, &r));
    BOOST_TEST(wire.empty());
    BOOST_TEST(r.ok);
    BOOST_TEST(r.out == cgi);
    BOOST_TEST(r.status() == 200);
    BOOST_TEST(r.body().size() == size);
  }
}

BOOST_AUTO_TEST_CASE(http_reads_params_headers_and_the_body_of_a_request) {
  rec::Reader reader;
  reader.feed(fcgi::request_bytes({{"REQUEST_METHOD", "POST"},
                                   {"DOCUMENT_URI", "/oauth/token"},
                                   {"QUERY_STRING", "a=1"},
                                   {"HTTP_USER_AGENT", "t"},
                                   {"CONTENT_TYPE", "application/x-www-form-urlencoded"},
                                   {"CONTENT_LENGTH", "5"}},
                                  "x=1&y"));
  BOOST_REQUIRE(reader.next() == Next::kRequest);
  rec::Request fcgi_request = reader.take_request();
  portcullis::http::Request request;
  BOOST_TEST(
      (portcullis::http::read_request(fcgi_request, request) == portcullis::http::BodyRead::kOk));
  BOOST_TEST(request.method == "POST");
  BOOST_TEST(request.path == "/oauth/token");
  BOOST_TEST(request.query_string == "a=1");
  BOOST_TEST(request.headers.at("user-agent") == "t");
  BOOST_TEST(request.headers.at("content-type") == "application/x-www-form-urlencoded");
  BOOST_TEST(request.body == "x=1&y");
}

BOOST_AUTO_TEST_CASE(http_refuses_bodies_shorter_than_announced_or_over_the_limit) {
  auto read = [](std::map<std::string, std::string> params, std::string body) {
    rec::Reader reader;
    reader.feed(fcgi::request_bytes(params, body));
    BOOST_REQUIRE(reader.next() == Next::kRequest);
    rec::Request r = reader.take_request();
    portcullis::http::Request request;
    return portcullis::http::read_request(r, request);
  };
  using portcullis::http::BodyRead;
  BOOST_TEST((read({{"CONTENT_LENGTH", "9"}}, "short") == BodyRead::kTruncated));
  BOOST_TEST((read({{"CONTENT_LENGTH", "2"}}, "longer") == BodyRead::kOk));
  BOOST_TEST((read({{"CONTENT_LENGTH", "x"}}, "") == BodyRead::kBadLength));
  BOOST_TEST((read({{"CONTENT_LENGTH", std::to_string(portcullis::http::kMaxBodyBytes + 1)}}, "") ==
              BodyRead::kTooLarge));
}
