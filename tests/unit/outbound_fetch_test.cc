// The SSRF-guarded fetcher against a real HTTPS server on 127.0.0.1, with a CA made for the
// test: the allow-list and the extra CA let it through, everything else refuses, and refusals
// on address grounds happen before any connection.
#define BOOST_TEST_MODULE outbound_fetch
#include <stdlib.h>

#include <boost/test/unit_test.hpp>
#include <chrono>

#include "outbound/https_get.h"
#include "test_pki.h"
#include "tls_test_server.h"

using namespace portcullis;
using namespace portcullis::outbound;
using portcullis::testing::http_response;
using portcullis::testing::TestPki;
using portcullis::testing::TlsTestServer;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  Fixture() : server(TestPki::get().cert_file(), TestPki::get().key_file()) {
    options.allow_hosts = {"localhost:" + port()};
    options.ca_file = TestPki::get().ca_file();
    options.max_body_bytes = 5120;
  }
  std::string port() const { return std::to_string(server.port()); }
  std::string url(const std::string& path, const std::string& host = "localhost") const {
    return "https://" + host + ":" + port() + path;
  }
  TlsTestServer server;
  Options options;
};

// A resolver that plays DNS for names no real server knows (.test never resolves).
Resolver fake_dns(std::vector<std::string> addresses) {
  return [addresses](const std::string&, std::chrono::milliseconds) {
    std::vector<IpAddress> out;
    for (const auto& a : addresses) out.push_back(*parse_ip(a));
    return Result<std::vector<IpAddress>>(out);
  };
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(allowed_host_with_the_extra_ca_is_fetched, Fixture) {
  server.set("/doc.json", {http_response(200, R"({"a":1})",
                                         "Content-Type: text/plain\r\nCache-Control: max-age=60\r\n"
                                         "Cache-Control: public\r\nAge: 5\r\nExpires: x\r\n")});
  auto r = https_get(url("/doc.json"), options);
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->body == R"({"a":1})");
  BOOST_TEST(r->header("content-type") == "text/plain");
  BOOST_TEST(r->header("cache-control") == "max-age=60, public");
  BOOST_TEST(r->header("age") == "5");
  BOOST_TEST(r->header("expires") == "x");
  BOOST_TEST(r->header("x-missing").empty());
  BOOST_TEST(server.connections() == 1);
  auto requests = server.requests();
  BOOST_REQUIRE(requests.size() == 1u);
  BOOST_TEST(requests[0].rfind("GET /doc.json HTTP/1.1\r\n", 0) == 0);
  BOOST_TEST(requests[0].find("Accept: application/json\r\n") != std::string::npos);
  BOOST_TEST(requests[0].find("User-Agent: Portcullis") != std::string::npos);
  BOOST_TEST(requests[0].find("Accept-Encoding") == std::string::npos);
  // Any other status is the caller's to judge.
  server.set("/gone", {http_response(404, "{}")});
  auto gone = https_get(url("/gone"), options);
  BOOST_REQUIRE(gone.is_ok());
  BOOST_TEST(gone->status == 404);
}

BOOST_FIXTURE_TEST_CASE(special_addresses_are_refused_before_connecting, Fixture) {
  server.set("/doc.json", {http_response(200, "{}")});
  Options guarded = options;
  guarded.allow_hosts.clear();
  // localhost resolves to 127.0.0.1 (and ::1); a literal is checked the same way.
  for (const std::string& target :
       {url("/doc.json"), url("/doc.json", "127.0.0.1"), url("/doc.json", "[::1]"),
        url("/doc.json", "[::ffff:127.0.0.1]"), url("/doc.json", "10.0.0.1"),
        url("/doc.json", "169.254.169.254")}) {
    auto r = https_get(target, guarded);
    BOOST_TEST(!r.is_ok(), target);
    BOOST_TEST(r.status().code() == Code::kPermissionDenied, target);
    BOOST_TEST(r.status().message() == "the host has no public address", target);
  }
  // The allow-list names host:port; another port or another spelling of the host is not it.
  guarded.allow_hosts = {"localhost:" + std::to_string(server.port() + 1), "127.0.0.1:1"};
  BOOST_TEST(https_get(url("/doc.json"), guarded).status().code() == Code::kPermissionDenied);
  BOOST_TEST(https_get(url("/doc.json", "127.0.0.1"), guarded).status().code() ==
             Code::kPermissionDenied);
  BOOST_TEST(server.connections() == 0);
  // A bare host entry covers every port of that host, and a literal works when named.
  guarded.allow_hosts = {"localhost"};
  BOOST_TEST(https_get(url("/doc.json"), guarded).is_ok());
  guarded.allow_hosts = {"127.0.0.1:" + port()};
  BOOST_TEST(https_get(url("/doc.json", "127.0.0.1"), guarded).is_ok());
  BOOST_TEST(server.connections() == 2);
}

BOOST_FIXTURE_TEST_CASE(one_special_address_among_many_refuses_the_request, Fixture) {
  // A name with a public and a private address: a client could not tell which one we would
  // use, so the whole request is refused.
  Options o = options;
  o.allow_hosts.clear();
  o.resolver = fake_dns({"93.184.216.34", "127.0.0.1"});
  auto r = https_get("https://split.test:" + port() + "/doc.json", o);
  BOOST_TEST(r.status().code() == Code::kPermissionDenied);
  o.resolver = fake_dns({"2606:4700::1111", "fd00::1"});
  BOOST_TEST(https_get("https://split.test:" + port() + "/doc.json", o).status().code() ==
             Code::kPermissionDenied);
  o.resolver = fake_dns({});  // NXDOMAIN reads the same as a private address
  auto none = https_get("https://nowhere.test:" + port() + "/doc.json", o);
  BOOST_TEST(none.status().code() == Code::kPermissionDenied);
  BOOST_TEST(none.status().message() == r.status().message());
  BOOST_TEST(server.connections() == 0);
}

BOOST_FIXTURE_TEST_CASE(the_connection_goes_to_the_checked_address, Fixture) {
  // rebind.test exists in no DNS: the fetch can only succeed if curl connects to the address
  // our resolver answered, pinned, instead of resolving the name again itself.
  server.set("/doc.json", {http_response(200, "{}")});
  Options o = options;
  o.allow_hosts = {"rebind.test"};
  o.resolver = fake_dns({"127.0.0.1"});
  auto r = https_get("https://rebind.test:" + port() + "/doc.json", o);
  BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  BOOST_TEST(server.connections() == 1);
  BOOST_TEST(server.requests()[0].find("Host: rebind.test:" + port()) != std::string::npos);
  // Without our resolver the name does not exist at all.
  o.resolver = nullptr;
  BOOST_TEST(!https_get("https://rebind.test:" + port() + "/doc.json", o).is_ok());
  BOOST_TEST(server.connections() == 1);
}

// A Session (webhook deliveries) keeps its handle, and so its connections, between calls, and
// every call runs the whole guard: a host allowed before and refused now, or a name resolving
// now to a special-use address, is refused before any connection.
BOOST_FIXTURE_TEST_CASE(a_session_runs_the_guard_on_every_call, Fixture) {
  server.set("/in", {http_response(200, "ok")});
  Session session;
  PostRequest post;
  post.body = "{}";
  for (int i = 0; i < 2; ++i) {
    auto r = session.post(url("/in"), post, options);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    BOOST_TEST(r->status == 200);
    BOOST_TEST(r->body == "ok");
  }
  BOOST_TEST(session.connections() >= 1u);
  const int connected = server.connections();
  Options guarded = options;
  guarded.allow_hosts.clear();  // localhost (127.0.0.1) is special-use again
  auto refused = session.post(url("/in"), post, guarded);
  BOOST_TEST(refused.status().code() == Code::kPermissionDenied);
  Options rebound = options;
  rebound.resolver = fake_dns({"169.254.169.254"});
  refused = session.post(url("/in", "hooks.test"), post, rebound);
  BOOST_TEST(refused.status().code() == Code::kPermissionDenied);
  BOOST_TEST(server.connections() == connected);
  auto again = session.post(url("/in"), post, options);
  BOOST_REQUIRE_MESSAGE(again.is_ok(), again.status().to_string());
  BOOST_TEST(again->status == 200);
  const auto requests = server.requests();
  BOOST_REQUIRE(requests.size() == 3u);
  for (const std::string& r : requests) BOOST_TEST(r.rfind("POST /in HTTP/1.1\r\n", 0) == 0);
}

BOOST_FIXTURE_TEST_CASE(tls_is_verified_and_https_is_required, Fixture) {
  server.set("/doc.json", {http_response(200, "{}")});
  Options no_ca = options;
  no_ca.ca_file.clear();  // the test CA is in no system store
  auto r = https_get(url("/doc.json"), no_ca);
  BOOST_TEST(r.status().code() == Code::kUnavailable);
  BOOST_TEST(r.status().message() == "the server's TLS certificate could not be verified");
  BOOST_TEST(server.requests().empty());  // the handshake failed: no request was sent
  // The certificate is for localhost and 127.0.0.1, not for another name at that address.
  Options o = options;
  o.allow_hosts = {"other.test"};
  o.resolver = fake_dns({"127.0.0.1"});
  BOOST_TEST(https_get("https://other.test:" + port() + "/doc.json", o).status().message() ==
             "the server's TLS certificate could not be verified");
  // An unusable extra CA file is an error, not a silent fallback to the system store.
  Options bad_ca = options;
  bad_ca.ca_file = "/nonexistent/ca.pem";
  BOOST_TEST(https_get(url("/doc.json"), bad_ca).status().code() == Code::kFailedPrecondition);
  int before = server.connections();
  BOOST_TEST(https_get("http://localhost:" + port() + "/doc.json", options).status().code() ==
             Code::kInvalidArgument);
  BOOST_TEST(server.connections() == before);
}

BOOST_FIXTURE_TEST_CASE(redirects_are_not_followed, Fixture) {
  server.set("/doc.json", {http_response(302, "", "Location: /other.json\r\n")});
  server.set("/other.json", {http_response(200, "{}")});
  for (int code : {301, 302, 303, 307, 308}) {
    server.set("/doc.json", {http_response(code, "", "Location: /other.json\r\n")});
    auto r = https_get(url("/doc.json"), options);
    BOOST_TEST(r.status().code() == Code::kFailedPrecondition);
    BOOST_TEST(r.status().message().find("redirect (HTTP " + std::to_string(code)) !=
               std::string::npos);
  }
  for (const auto& request : server.requests()) {
    BOOST_TEST(request.find("/other.json") == std::string::npos);
  }
}

BOOST_FIXTURE_TEST_CASE(bodies_are_capped, Fixture) {
  std::string exact(5120, 'x');
  server.set("/exact", {http_response(200, exact)});
  auto ok = https_get(url("/exact"), options);
  BOOST_REQUIRE_MESSAGE(ok.is_ok(), ok.status().to_string());
  BOOST_TEST(ok->body.size() == 5120u);
  // Announced too large: refused on the Content-Length alone.
  server.set("/big", {http_response(200, exact + "y")});
  auto big = https_get(url("/big"), options);
  BOOST_TEST(big.status().code() == Code::kFailedPrecondition);
  BOOST_TEST(big.status().message() == "the response is larger than 5120 bytes");
  // Not announced: the transfer is cut past the cap.
  server.set("/stream", {http_response(200, std::string(200'000, 'z'), "", false)});
  auto stream = https_get(url("/stream"), options);
  BOOST_TEST(stream.status().message() == "the response is larger than 5120 bytes");
  // Endless headers are cut too.
  std::string headers;
  for (int i = 0; i < 2000; ++i)
    headers += "X-Filler-" + std::to_string(i) + ": " + std::string(40, 'h') + "\r\n";
  server.set("/headers", {http_response(200, "{}", headers)});
  BOOST_TEST(https_get(url("/headers"), options).status().message() ==
             "the response headers are too large");
}

BOOST_FIXTURE_TEST_CASE(a_slow_server_times_out_in_five_seconds, Fixture) {
  server.set("/slow", {http_response(200, "{}"), 30s});
  auto started = std::chrono::steady_clock::now();
  auto r = https_get(url("/slow"), options);
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_TEST(r.status().code() == Code::kUnavailable);
  BOOST_TEST(r.status().message() == "the request timed out after 5 s");
  BOOST_TEST(took >= 4500ms);
  BOOST_TEST(took < 6500ms);
}

BOOST_FIXTURE_TEST_CASE(proxies_from_the_environment_are_ignored, Fixture) {
  server.set("/doc.json", {http_response(200, "{}")});
  // A proxy would receive the connection instead of the checked address.
  ::setenv("https_proxy", "http://127.0.0.1:9", 1);
  ::setenv("HTTPS_PROXY", "http://127.0.0.1:9", 1);
  ::setenv("ALL_PROXY", "http://127.0.0.1:9", 1);
  auto r = https_get(url("/doc.json"), options);
  ::unsetenv("https_proxy");
  ::unsetenv("HTTPS_PROXY");
  ::unsetenv("ALL_PROXY");
  BOOST_TEST(r.is_ok(), r.status().to_string());
  BOOST_TEST(server.connections() == 1);
}

BOOST_FIXTURE_TEST_CASE(a_closed_port_fails_cleanly, Fixture) {
  std::string target = url("/doc.json");
  server.stop();
  auto r = https_get(target, options);
  BOOST_TEST(r.status().code() == Code::kUnavailable);
  BOOST_TEST(r.status().message() == "the connection was refused or could not be made");
}
