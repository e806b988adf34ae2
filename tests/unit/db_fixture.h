// Unit tests that need MariaDB use the test stack's server and their own database, named by
// PORTCULLIS_TEST_CONFIG (a config file; scripts/test writes it). Without it such a test FAILS:
// a database test never passes, or skips, silently because no database is there (issue 10).
// Run them through scripts/test (or set PORTCULLIS_TEST_CONFIG to a config of your own).
#pragma once

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <optional>
#include <string>

#include "config/config.h"
#include "store/db.h"

namespace portcullis::testing {

// The test database's configuration. Never empty: without PORTCULLIS_TEST_CONFIG, or with one
// that does not load, the calling test fails here (BOOST_FAIL throws), so no caller needs, or
// has, an "if there is no database" branch.
inline std::optional<config::Config> test_config() {
  const char* path = std::getenv("PORTCULLIS_TEST_CONFIG");
  if (!path || !*path) {
    BOOST_FAIL(
        "this test needs a database: PORTCULLIS_TEST_CONFIG is not set (run it through "
        "scripts/test)");
  }
  auto c = config::load(path);
  if (!c) BOOST_FAIL("cannot load " << path << ": " << c.status().to_string());
  return std::move(c).value();
}

}  // namespace portcullis::testing
