// resolve_client end to end: the database cache shared by workers and a real HTTPS server on
// loopback (allowed through PORTCULLIS_CIMD_ALLOW_HOSTS, trusted through the extra CA file).
#define BOOST_TEST_MODULE cimd_resolve
#include <boost/test/unit_test.hpp>
#include <chrono>

#include "cimd/cache.h"
#include "cimd/freshness.h"
#include "cimd/resolve.h"
#include "cimd_expect.h"
#include "db_fixture.h"
#include "store/migrate.h"
#include "test_pki.h"
#include "tls_test_server.h"

using namespace portcullis;
using portcullis::testing::http_response;
using portcullis::testing::TestPki;
using portcullis::testing::TlsTestServer;
using namespace std::chrono_literals;

namespace {

constexpr int64_t kNow = 1'800'000'000;

struct Env {
  Env() : server(TestPki::get().cert_file(), TestPki::get().key_file()) {
    auto c = testing::test_config();
    config = *c;
    config.cimd_allow_hosts = {"localhost:" + std::to_string(server.port())};
    config.outbound_ca_file = TestPki::get().ca_file();
    db = std::make_unique<store::Db>(config.db);
    BOOST_REQUIRE(store::migrate(*db, store::embedded_migrations()).is_ok());
    BOOST_REQUIRE(db->execute("DELETE FROM cimd_documents").is_ok());
  }

  std::string url(const std::string& path) const {
    return "https://localhost:" + std::to_string(server.port()) + path;
  }
  // Serves a valid document for `path` (its client_id is the full URL) with these headers.
  void serve_valid(const std::string& path, const std::string& headers = "") {
    server.set(path, {http_response(200, document(url(path)),
                                    "Content-Type: application/json\r\n" + headers)});
  }
  static std::string document(const std::string& client_id) {
    return R"({"client_id":")" + client_id +
           R"(","client_name":"Loopback Test","redirect_uris":["http://127.0.0.1/cb"]})";
  }
  Result<oauth::ClientInfo> resolve(const std::string& path, int64_t now = kNow) {
    return cimd::resolve_client(*db, config, url(path), now);
  }
  // The cached row's expiry, or -1 when nothing is cached for `path`.
  int64_t cached_until(const std::string& path) {
    auto rows = db->query("SELECT expires_at FROM cimd_documents WHERE url = ?", {url(path)});
    BOOST_REQUIRE(rows.is_ok());
    return rows->empty() ? -1 : (*rows)[0].i64(0);
  }

  TlsTestServer server;
  config::Config config;
  std::unique_ptr<store::Db> db;
};

void expect_refused(const Result<oauth::ClientInfo>& r, const std::string& why) {
  BOOST_REQUIRE(!r.is_ok());
  testing::expect_invalid_client(r.status(), why);
}

}  // namespace

BOOST_AUTO_TEST_CASE(fetched_once_then_served_from_the_cache_until_it_expires) {
  Env env;
  env.serve_valid("/client.json", "Cache-Control: public, max-age=600\r\n");
  auto first = env.resolve("/client.json");
  BOOST_REQUIRE_MESSAGE(first.is_ok(), first.status().to_string());
  BOOST_TEST((first->kind == oauth::ClientInfo::Kind::kCimd));
  BOOST_TEST(first->client_id == env.url("/client.json"));
  BOOST_TEST(first->client_name == "Loopback Test");
  BOOST_TEST(first->token_endpoint_auth_method == "none");
  BOOST_TEST(env.server.connections() == 1);
  BOOST_TEST(env.cached_until("/client.json") == kNow + 600);

  // Within max-age: no network at all, even when the server now answers 500 ...
  env.server.set("/client.json", {http_response(500, "{}")});
  BOOST_TEST(env.resolve("/client.json", kNow + 599).is_ok());
  // ... and for another worker, which has its own connection.
  store::Db other_worker(env.config.db);
  auto shared = cimd::resolve_client(other_worker, env.config, env.url("/client.json"), kNow + 1);
  BOOST_TEST(shared.is_ok());
  BOOST_TEST(shared->client_name == "Loopback Test");
  BOOST_TEST(env.server.connections() == 1);

  // Expired: fetched again; the 500 is an error and is not cached ...
  expect_refused(env.resolve("/client.json", kNow + 600), "answered HTTP 500 instead of 200");
  BOOST_TEST(env.server.connections() == 2);
  // ... so the next sign-in fetches again and succeeds once the server is fixed.
  env.serve_valid("/client.json", "Cache-Control: max-age=3600\r\n");
  BOOST_TEST(env.resolve("/client.json", kNow + 600).is_ok());
  BOOST_TEST(env.server.connections() == 3);
  BOOST_TEST(env.cached_until("/client.json") == kNow + 600 + 3600);

  // With the server gone entirely, the fresh copy still serves.
  env.server.stop();
  BOOST_TEST(env.resolve("/client.json", kNow + 4000).is_ok());
  expect_refused(env.resolve("/client.json", kNow + 4200), "could not be made");
}

BOOST_AUTO_TEST_CASE(cache_lifetimes_are_clamped) {
  Env env;
  struct Case {
    const char* path;
    const char* headers;
    int64_t seconds;
  } cases[] = {
      {"/none.json", "", cimd::kMinFreshSeconds},
      {"/short.json", "Cache-Control: max-age=10\r\n", cimd::kMinFreshSeconds},
      {"/nostore.json", "Cache-Control: no-store\r\n", cimd::kMinFreshSeconds},
      {"/long.json", "Cache-Control: max-age=31536000\r\n", cimd::kMaxFreshSeconds},
      {"/aged.json", "Cache-Control: max-age=1000\r\nAge: 400\r\n", 600},
      {"/expires.json",
       "Date: Fri, 15 Jan 2027 08:00:00 GMT\r\nExpires: Fri, 15 Jan 2027 08:20:00 GMT\r\n", 1200},
  };
  for (const Case& c : cases) {
    env.serve_valid(c.path, c.headers);
    BOOST_TEST(env.resolve(c.path).is_ok(), c.path);
    BOOST_TEST(env.cached_until(c.path) == kNow + c.seconds, c.path);
  }
  // Five minutes means five minutes: still cached one second before, fetched again at it.
  int before = env.server.connections();
  BOOST_TEST(env.resolve("/short.json", kNow + 299).is_ok());
  BOOST_TEST(env.server.connections() == before);
  BOOST_TEST(env.resolve("/short.json", kNow + 300).is_ok());
  BOOST_TEST(env.server.connections() == before + 1);
}

BOOST_AUTO_TEST_CASE(bad_responses_are_refused_and_never_cached) {
  Env env;
  const std::string self = env.url("/bad.json");
  const std::string doc = Env::document(self);
  struct Case {
    std::string raw;
    std::string why;
  } cases[] = {
      {http_response(302, "", "Location: " + env.url("/client.json") + "\r\n"),
       "redirect (HTTP 302), which is not followed"},
      {http_response(404, doc), "answered HTTP 404"},
      {http_response(500, doc), "answered HTTP 500"},
      {http_response(204, ""), "answered HTTP 204"},
      {http_response(200, "<html>hello</html>", "Content-Type: text/html\r\n"), "not valid JSON"},
      {http_response(200, std::string(6000, ' ') + doc), "larger than 5120 bytes"},
      {http_response(200,
                     doc.substr(0, doc.size() - 1) + R"(,"pad":")" + std::string(6000, 'x') + "\"}",
                     "", false),
       "larger than 5120 bytes"},
      {http_response(200, R"({"client_id":")" + self + R"(","client_name":"x"})"),
       "has no redirect_uris"},
      {http_response(200,
                     R"({"client_id":")" + self + R"(","redirect_uris":["https://a.example/cb"]})"),
       "has no client_name"},
      {http_response(200, Env::document(self + "/")), "client_id is not the URL"},
      {http_response(200, Env::document("https://LOCALHOST:" + std::to_string(env.server.port()) +
                                        "/bad.json")),
       "client_id is not the URL"},
      {http_response(200, R"({"client_secret":"abc",)" + doc.substr(1)), "client secret"},
      {http_response(200,
                     R"({"token_endpoint_auth_method":"client_secret_basic",)" + doc.substr(1)),
       "shared-secret"},
  };
  for (const Case& c : cases) {
    env.server.set("/bad.json", {c.raw});
    expect_refused(env.resolve("/bad.json"), c.why);
    BOOST_TEST(env.cached_until("/bad.json") == -1, c.why);
  }
  // The redirect target was never requested.
  for (const auto& request : env.server.requests()) {
    BOOST_TEST(request.find("GET /client.json") == std::string::npos);
  }
  // Nothing was cached, so a fixed document is fetched and accepted at once.
  env.server.set("/bad.json", {http_response(200, doc, "Content-Type: text/plain\r\n")});
  BOOST_TEST(env.resolve("/bad.json").is_ok());
}

BOOST_AUTO_TEST_CASE(loopback_is_refused_without_the_allow_list) {
  Env env;
  env.serve_valid("/client.json");
  env.config.cimd_allow_hosts.clear();
  auto r = env.resolve("/client.json");
  expect_refused(r,
                 "Could not fetch the application's metadata document from localhost: the "
                 "host has no public address.");
  expect_refused(
      cimd::resolve_client(
          *env.db, env.config,
          "https://127.0.0.1:" + std::to_string(env.server.port()) + "/client.json", kNow),
      "no public address");
  BOOST_TEST(env.server.connections() == 0);
}

BOOST_AUTO_TEST_CASE(invalid_urls_never_reach_the_network) {
  Env env;
  const std::string port = std::to_string(env.server.port());
  for (const std::string& bad :
       {"http://localhost:" + port + "/client.json", "https://localhost:" + port,
        "https://localhost:" + port + "/", "https://localhost:" + port + "/client.json#x",
        "https://localhost:" + port + "/a/../client.json",
        "https://user@localhost:" + port + "/client.json",
        "https://localhost:" + port + "/client.json?v=1"}) {
    expect_refused(cimd::resolve_client(*env.db, env.config, bad, kNow), "client metadata URL");
  }
  BOOST_TEST(env.server.connections() == 0);
}

BOOST_AUTO_TEST_CASE(a_cached_document_that_breaks_a_newer_rule_is_fetched_again) {
  Env env;
  env.serve_valid("/client.json");
  // As if an older release had cached a document today's rules refuse.
  const std::string stale = R"({"client_id":")" + env.url("/client.json") +
                            R"(","client_name":"Old","redirect_uris":["http://evil.example/cb"]})";
  BOOST_REQUIRE(
      cimd::store_document(*env.db, env.url("/client.json"), stale, kNow, kNow + 600).is_ok());
  auto r = env.resolve("/client.json");
  BOOST_REQUIRE(r.is_ok());
  BOOST_TEST(r->client_name == "Loopback Test");
  BOOST_TEST(env.server.connections() == 1);
  BOOST_TEST(cimd::prune_documents(*env.db, kNow + 300 + 86400 + 1).is_ok());
  BOOST_TEST(env.cached_until("/client.json") == -1);
}

BOOST_AUTO_TEST_CASE(a_slow_document_server_times_out_in_five_seconds) {
  Env env;
  env.server.set("/slow.json", {http_response(200, Env::document(env.url("/slow.json"))), 20s});
  auto started = std::chrono::steady_clock::now();
  auto r = env.resolve("/slow.json");
  auto took = std::chrono::steady_clock::now() - started;
  expect_refused(r, "timed out after 5 s");
  BOOST_TEST(took < 6500ms);
  BOOST_TEST(env.cached_until("/slow.json") == -1);
}
