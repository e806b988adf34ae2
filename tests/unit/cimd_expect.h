// The one shape every CIMD refusal takes (InvalidArgument, reason invalid_client, a message for
// the user's error page), checked alike by the rule tests and the end-to-end tests.
#pragma once

#include <boost/test/unit_test.hpp>
#include <string>

#include "core/status.h"

namespace portcullis::testing {

// Passes when `status` is a CIMD refusal whose message contains `why`.
inline void expect_invalid_client(const Status& status, const std::string& why) {
  BOOST_TEST(status.code() == Code::kInvalidArgument);
  BOOST_TEST(status.reason() == "invalid_client");
  BOOST_TEST(status.message().find(why) != std::string::npos,
             "'" << status.message() << "' should mention '" << why << "'");
}

}  // namespace portcullis::testing
