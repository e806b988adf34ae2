// Unit tests that need MariaDB use the test stack's server and their own database, named by
// PORTCULLIS_TEST_CONFIG (a config file; scripts/test writes it). Without it they are skipped,
// unless PORTCULLIS_REQUIRE_DB=1 (scripts/test sets it), where a missing database is a failure.
#pragma once

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <optional>
#include <string>

#include "config/config.h"
#include "store/db.h"

namespace portcullis::testing {

inline std::optional<config::Config> test_config() {
  const char* path = std::getenv("PORTCULLIS_TEST_CONFIG");
  const char* required = std::getenv("PORTCULLIS_REQUIRE_DB");
  bool must = required && std::string(required) == "1";
  if (!path) {
    if (must) BOOST_FAIL("PORTCULLIS_TEST_CONFIG is not set but a database is required");
    BOOST_TEST_MESSAGE("skipped: no PORTCULLIS_TEST_CONFIG (run through scripts/test)");
    return std::nullopt;
  }
  auto c = config::load(path);
  if (!c) BOOST_FAIL("cannot load " << path << ": " << c.status().to_string());
  return *c;
}

}  // namespace portcullis::testing
