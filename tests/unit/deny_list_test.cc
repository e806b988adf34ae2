#define BOOST_TEST_MODULE deny_list
#include "validation/deny_list.h"

#include <boost/test/unit_test.hpp>

#include "crypto/random.h"
#include "db_fixture.h"
#include "oauth/grants.h"
#include "store/migrate.h"

using namespace portcullis;

BOOST_AUTO_TEST_CASE(revocations_reach_the_worker_set_on_the_next_due_sync) {
  auto config = testing::test_config();
  if (!config) return;
  store::Db db(config->db);
  BOOST_REQUIRE(store::migrate(db, store::embedded_migrations()).is_ok());
  oauth::GrantStore grants(db);
  const int64_t now = 1'800'000'000;
  const std::string first = crypto::random_token(16);
  const std::string second = crypto::random_token(16);
  const std::string expired = crypto::random_token(16);
  BOOST_REQUIRE(grants.revoke_access_token(first, now + 600, now).is_ok());
  BOOST_REQUIRE(grants.revoke_access_token(expired, now - 3600, now - 3700).is_ok());

  validation::DenyList deny(1000);
  BOOST_REQUIRE(deny.sync_if_due(db, 0, now).is_ok());
  BOOST_TEST(deny.revoked(first));
  BOOST_TEST(!deny.revoked(expired));  // long expired: no validator would accept it anyway
  BOOST_TEST(!deny.revoked(second));

  // Revoked a moment later: not seen before the interval has passed, seen right after.
  BOOST_REQUIRE(grants.revoke_access_token(second, now + 600, now + 1).is_ok());
  BOOST_REQUIRE(deny.sync_if_due(db, 999, now + 1).is_ok());
  BOOST_TEST(!deny.revoked(second));
  BOOST_REQUIRE(deny.sync_if_due(db, 1000, now + 1).is_ok());
  BOOST_TEST(deny.revoked(second));
  BOOST_TEST(deny.revoked(first));

  // Once a token is past its expiry (and the skew allowance) it leaves the set.
  BOOST_REQUIRE(deny.sync_if_due(db, 5000, now + 700).is_ok());
  BOOST_TEST(!deny.revoked(first));
}
