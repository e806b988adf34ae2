#define BOOST_TEST_MODULE config
#include "config/config.h"

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <utility>

using namespace portcullis;

namespace {
config::Settings base() {
  return {{"PORTCULLIS_BASE_URL", "https://auth.example.com/"},
          {"PORTCULLIS_MASTER_KEY_FILE", "/etc/portcullis/master.key"}};
}
}  // namespace

BOOST_AUTO_TEST_CASE(parses_key_value_files) {
  auto s = config::parse_settings(
      "# comment\n\nPORTCULLIS_BASE_URL=https://a.example\nexport PORTCULLIS_WORKERS = 4\n"
      "PORTCULLIS_DB_PASSWORD='p#w d'\nPORTCULLIS_DB_NAME=\"x\"\n");
  BOOST_REQUIRE(s.is_ok());
  BOOST_TEST(s->at("PORTCULLIS_BASE_URL") == "https://a.example");
  BOOST_TEST(s->at("PORTCULLIS_WORKERS") == "4");
  BOOST_TEST(s->at("PORTCULLIS_DB_PASSWORD") == "p#w d");
  BOOST_TEST(s->at("PORTCULLIS_DB_NAME") == "x");
  auto bad = config::parse_settings("A=1\nnot a setting\n");
  BOOST_TEST(!bad.is_ok());
  BOOST_TEST(bad.status().message().find("line 2") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(validates_and_applies_defaults) {
  auto c = config::from_settings(base());
  BOOST_REQUIRE(c.is_ok());
  BOOST_TEST(c->base_url == "https://auth.example.com");  // trailing slash dropped
  BOOST_TEST(c->db.name == "portcullis");
  BOOST_TEST(c->key_prepublish_seconds == 3600);
  BOOST_TEST(!c->is_local());

  auto s = base();
  s.erase("PORTCULLIS_BASE_URL");
  BOOST_TEST(!config::from_settings(s).is_ok());

  s = base();
  s["PORTCULLIS_BASE_URL"] = "http://127.0.0.1:8080";
  BOOST_TEST(!config::from_settings(s).is_ok());  // plain http only in local mode
  s["PORTCULLIS_MODE"] = "local";
  BOOST_TEST(config::from_settings(s).is_ok());

  s = base();
  s["PORTCULLIS_WORKERS"] = "many";
  BOOST_TEST(!config::from_settings(s).is_ok());
  s["PORTCULLIS_WORKERS"] = "-1";
  BOOST_TEST(!config::from_settings(s).is_ok());

  // The wellknown pool's own count: one per CPU unless set, whatever PORTCULLIS_WORKERS says.
  s = base();
  s["PORTCULLIS_WORKERS"] = "8";
  for (const auto& [text, count] : {std::pair{"", 0}, {"3", 3}, {"-1", -1}, {"257", -1}}) {
    if (*text != '\0') s["PORTCULLIS_WELLKNOWN_WORKERS"] = text;
    auto parsed = config::from_settings(s);
    BOOST_TEST(parsed.is_ok() == (count >= 0));
    if (parsed.is_ok()) BOOST_TEST(parsed->wellknown_workers == count);
  }

  // /keys may never be cached longer than a new key is pre-published, less the workers' key
  // ring refresh (30 s by default) and nginx's cache of /keys (2 s).
  s = base();
  s["PORTCULLIS_KEY_PREPUBLISH_SECONDS"] = "60";
  s["PORTCULLIS_JWKS_MAX_AGE_SECONDS"] = "300";
  BOOST_TEST(config::from_settings(s)->jwks_max_age_seconds == 28);
  s["PORTCULLIS_KEYRING_REFRESH_SECONDS"] = "1";
  BOOST_TEST(config::from_settings(s)->jwks_max_age_seconds == 57);
  // A window the key ring and nginx's cache do not fit in is refused.
  s["PORTCULLIS_KEY_PREPUBLISH_SECONDS"] = "3";
  BOOST_TEST(!config::from_settings(s).is_ok());
  s["PORTCULLIS_KEY_PREPUBLISH_SECONDS"] = "4";
  BOOST_TEST(config::from_settings(s)->jwks_max_age_seconds == 1);
}

BOOST_AUTO_TEST_CASE(password_files_lose_their_trailing_newline) {
  char path[] = "/tmp/portcullis-config-test-XXXXXX";
  int fd = mkstemp(path);
  BOOST_REQUIRE(fd >= 0);
  BOOST_REQUIRE(write(fd, "s3cret\n", 7) == 7);
  close(fd);
  auto s = base();
  s["PORTCULLIS_DB_PASSWORD_FILE"] = path;
  auto c = config::from_settings(s);
  unlink(path);
  BOOST_REQUIRE(c.is_ok());
  BOOST_TEST(c->db.password == "s3cret");
  s["PORTCULLIS_DB_PASSWORD_FILE"] = "/nonexistent/password";
  BOOST_TEST(!config::from_settings(s).is_ok());
}

BOOST_AUTO_TEST_CASE(outbound_settings) {
  auto s = base();
  // Long enough that the list cannot live in a small-string buffer: a dangling view shows.
  s["PORTCULLIS_CIMD_ALLOW_HOSTS"] =
      " localhost:8443 ,, metadata.internal.example.com ,[::1]:9443," + std::string(40, 'a');
  s["PORTCULLIS_OUTBOUND_CA_FILE"] = "/etc/portcullis/extra-ca.pem";
  auto c = config::from_settings(s);
  BOOST_REQUIRE(c.is_ok());
  BOOST_TEST(c->cimd_allow_hosts ==
             (std::vector<std::string>{"localhost:8443", "metadata.internal.example.com",
                                       "[::1]:9443", std::string(40, 'a')}));
  BOOST_TEST(c->outbound_ca_file == "/etc/portcullis/extra-ca.pem");
  auto none = config::from_settings(base());
  BOOST_REQUIRE(none.is_ok());
  BOOST_TEST(none->cimd_allow_hosts.empty());
  BOOST_TEST(none->outbound_ca_file.empty());
}

BOOST_AUTO_TEST_CASE(demo_resource_id_is_optional_and_must_name_a_resource) {
  BOOST_TEST(config::from_settings(base())->demo_resource_id.empty());
  auto s = base();
  s["PORTCULLIS_DEMO_RESOURCE_ID"] = "res_01m7z481xs5x681c7y2m8fbc52";
  BOOST_TEST(config::from_settings(s)->demo_resource_id == "res_01m7z481xs5x681c7y2m8fbc52");
  s["PORTCULLIS_DEMO_RESOURCE_ID"] = "org_1";
  BOOST_TEST(!config::from_settings(s).is_ok());
}
