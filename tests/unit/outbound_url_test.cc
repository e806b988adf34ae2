#define BOOST_TEST_MODULE outbound_url
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>

#include "crypto/rsa.h"
#include "crypto/x509.h"
#include "outbound/allow_list.h"
#include "outbound/ca_bundle.h"
#include "outbound/url.h"

using namespace portcullis;
using namespace portcullis::outbound;

BOOST_AUTO_TEST_CASE(https_urls_are_split_as_written) {
  auto u = parse_https_url("https://client.example.com/oauth/client.json");
  BOOST_REQUIRE(u.is_ok());
  BOOST_TEST(u->host == "client.example.com");
  BOOST_TEST(!u->ip.has_value());
  BOOST_TEST(u->port == 443);
  BOOST_TEST(!u->explicit_port);
  BOOST_TEST(u->path == "/oauth/client.json");
  BOOST_TEST(!u->query.has_value());
  BOOST_TEST(u->origin() == "https://client.example.com");

  auto p = parse_https_url("https://client.example.com:8443/a?b=c");
  BOOST_REQUIRE(p.is_ok());
  BOOST_TEST(p->port == 8443);
  BOOST_TEST(p->explicit_port);
  BOOST_TEST(p->origin() == "https://client.example.com:8443");
  BOOST_TEST(*p->query == "b=c");

  auto v6 = parse_https_url("https://[2001:db8::1]:444/x");
  BOOST_REQUIRE(v6.is_ok());
  BOOST_TEST(v6->host == "2001:db8::1");
  BOOST_TEST(v6->ip.has_value());
  BOOST_TEST(v6->authority == "[2001:db8::1]:444");

  auto v4 = parse_https_url("https://93.184.216.34/x");
  BOOST_REQUIRE(v4.is_ok());
  BOOST_TEST(v4->ip.has_value());

  auto bare = parse_https_url("https://example.com");
  BOOST_REQUIRE(bare.is_ok());
  BOOST_TEST(bare->path.empty());
  BOOST_TEST(parse_https_url("https://example.com?x").is_ok());
  BOOST_TEST(parse_https_url("https://xn--bcher-kva.example/%C3%A9").is_ok());
}

BOOST_AUTO_TEST_CASE(anything_two_parsers_could_read_differently_is_refused) {
  for (const char* bad : {"http://example.com/x",
                          "HTTPS://example.com/x",
                          "ftp://example.com/x",
                          "https:/example.com/x",
                          "https:example.com/x",
                          "//example.com/x",
                          "https://user@example.com/x",
                          "https://user:pw@example.com/x",
                          "https://evil.com@example.com/x",
                          "https://example.com/x#frag",
                          "https://example.com/x y",
                          "https://example.com/x\ty",
                          "https://example.com\\@evil.com/",
                          "https://example.com/\xc3\xa9",
                          "https://exämple.com/x",
                          "https://Example.com/x",
                          "https://example.com:/x",
                          "https://example.com:0/x",
                          "https://example.com:0443/x",
                          "https://example.com:65536/x",
                          "https://example.com:-1/x",
                          "https://example.com:44a/x",
                          "https://example.com:443:443/x",
                          "https:///x",
                          "https://:443/x",
                          "https://127.1/x",
                          "https://0x7f.0.0.1/x",
                          "https://2130706433/x",
                          "https://010.0.0.1/x",
                          "https://1.2.3.4.5/x",
                          "https://example.123/x",
                          "https://example..com/x",
                          "https://.example.com/x",
                          "https://example.com./x",
                          "https://-example.com/x",
                          "https://example-.com/x",
                          "https://exa_mple.com/x",
                          "https://exa%6dple.com/x",
                          "https://[::1/x",
                          "https://[::1]x/x",
                          "https://[fe80::1%25eth0]/x",
                          "https://[127.0.0.1]/x",
                          "https://[v1.x]/x",
                          "https://example.com/%zz",
                          "https://example.com/%4",
                          "https://example.com/a<b",
                          "https://example.com/a\"b",
                          "https://example.com/a{b}",
                          "https://example.com/?q=<x>",
                          ""}) {
    auto u = parse_https_url(bad);
    BOOST_TEST(!u.is_ok(), bad);
    if (!u.is_ok()) BOOST_TEST(u.status().code() == Code::kInvalidArgument, bad);
  }
  BOOST_TEST(!parse_https_url("https://" + std::string(64, 'a') + ".example/x").is_ok());
  BOOST_TEST(!parse_https_url("https://" + std::string(4100, 'a')).is_ok());
  BOOST_TEST(!parse_https_url(std::string("https://example.com/\0x", 22)).is_ok());
  // The message explains without repeating the URL.
  auto st = parse_https_url("http://secret-internal-name/x").status();
  BOOST_TEST(st.message().find("secret") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(allow_list_names_exact_hosts_and_ports) {
  auto url = [](const char* text) { return *parse_https_url(text); };
  const std::vector<std::string> entries = {"localhost:8443", "Docs.Example.com", "[::1]:9443",
                                            "127.0.0.1",      "bad entry",        "x.test:",
                                            ":443",           "y.test:99999",     "z.test/path"};
  BOOST_TEST(host_allowed(entries, url("https://localhost:8443/a")));
  BOOST_TEST(!host_allowed(entries, url("https://localhost:8444/a")));
  BOOST_TEST(!host_allowed(entries, url("https://localhost/a")));  // 443 is not 8443
  BOOST_TEST(host_allowed(entries, url("https://docs.example.com/a")));
  BOOST_TEST(host_allowed(entries, url("https://docs.example.com:1234/a")));
  BOOST_TEST(!host_allowed(entries, url("https://evil.docs.example.com/a")));
  BOOST_TEST(!host_allowed(entries, url("https://example.com/a")));
  BOOST_TEST(host_allowed(entries, url("https://[::1]:9443/a")));
  BOOST_TEST(host_allowed(entries, url("https://[0:0::1]:9443/a")));
  BOOST_TEST(!host_allowed(entries, url("https://[::1]/a")));
  BOOST_TEST(host_allowed(entries, url("https://127.0.0.1:1/a")));
  BOOST_TEST(!host_allowed(entries, url("https://127.0.0.2/a")));
  BOOST_TEST(!host_allowed(entries, url("https://x.test/a")));
  BOOST_TEST(!host_allowed(entries, url("https://y.test/a")));
  BOOST_TEST(!host_allowed(entries, url("https://z.test/a")));
  BOOST_TEST(!host_allowed({}, url("https://localhost:8443/a")));
}

BOOST_AUTO_TEST_CASE(extra_ca_bundle_is_added_to_the_system_one) {
  auto dir =
      std::filesystem::temp_directory_path() / ("portcullis-ca-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string system = (dir / "system.pem").string();
  const std::string extra = (dir / "extra.pem").string();
  const std::string empty = (dir / "empty.pem").string();
  std::ofstream(system) << "-----BEGIN CERTIFICATE-----\nSYSTEM\n-----END CERTIFICATE-----";
  std::ofstream(extra) << "-----BEGIN CERTIFICATE-----\nEXTRA\n-----END CERTIFICATE-----\n";
  std::ofstream(empty) << "not a certificate\n";

  auto merged = merged_ca_bundle(system, extra);
  BOOST_REQUIRE(merged.is_ok());
  BOOST_TEST(merged->find("SYSTEM\n-----END CERTIFICATE-----\n") != std::string::npos);
  BOOST_TEST(merged->find("EXTRA") > merged->find("SYSTEM"));
  // Without a readable system bundle the extra one still loads (curl's CA directory remains).
  auto alone = merged_ca_bundle((dir / "missing.pem").string(), extra);
  BOOST_REQUIRE(alone.is_ok());
  BOOST_TEST(alone->find("EXTRA") != std::string::npos);
  // A configured bundle that cannot be used is an error, never silently ignored.
  BOOST_TEST(merged_ca_bundle(system, (dir / "missing.pem").string()).status().code() ==
             Code::kFailedPrecondition);
  BOOST_TEST(merged_ca_bundle(system, empty).status().code() == Code::kFailedPrecondition);
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(the_trust_store_is_parsed_once_and_rebuilt_when_a_file_changes) {
  auto dir = std::filesystem::temp_directory_path() /
             ("portcullis-store-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto certificate = [](const char* cn) {
    auto key = crypto::RsaPrivateKey::generate(2048);
    BOOST_REQUIRE(key.is_ok());
    auto pem = crypto::self_signed_certificate(*key, cn, 1700000000, 1900000000);
    BOOST_REQUIRE(pem.is_ok());
    return *pem;
  };
  const std::string system = (dir / "system.pem").string();
  const std::string extra = (dir / "extra.pem").string();
  std::ofstream(system) << certificate("system-ca");
  std::ofstream(extra) << certificate("extra-ca");
  auto count = [](x509_store_st* store) {
    return sk_X509_OBJECT_num(X509_STORE_get0_objects(store));
  };

  auto first = shared_trust_store(system, "", extra);
  BOOST_REQUIRE(first.is_ok());
  BOOST_TEST(count(first->get()) == 2);
  auto again = shared_trust_store(system, "", extra, std::chrono::seconds(0));
  BOOST_REQUIRE(again.is_ok());
  BOOST_TEST(again->get() == first->get());  // the same store: nothing parsed again
  // A renewed extra bundle (one more certificate) is not even looked at within the recheck
  // interval (no stat per request)...
  std::ofstream(extra, std::ios::app) << certificate("extra-ca-2");
  auto within = shared_trust_store(system, "", extra, std::chrono::hours(1));
  BOOST_REQUIRE(within.is_ok());
  BOOST_TEST(within->get() == first->get());
  // ...and applies at the first call after it.
  auto renewed = shared_trust_store(system, "", extra, std::chrono::seconds(0));
  BOOST_REQUIRE(renewed.is_ok());
  BOOST_TEST(renewed->get() != first->get());
  BOOST_TEST(count(renewed->get()) == 3);
  // An unusable extra bundle is an error, as for merged_ca_bundle.
  BOOST_TEST(shared_trust_store(system, "", (dir / "missing.pem").string()).status().code() ==
             Code::kFailedPrecondition);
  std::filesystem::remove_all(dir);
}
