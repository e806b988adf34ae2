#define BOOST_TEST_MODULE ratelimit
#include <boost/test/unit_test.hpp>

#include "db_fixture.h"
#include "ratelimit/limiter.h"
#include "store/migrate.h"

using namespace portcullis;

BOOST_AUTO_TEST_CASE(fixed_windows_are_shared_and_reset) {
  auto config = testing::test_config();
  store::Db db(config->db);
  store::Db other_worker(config->db);
  BOOST_REQUIRE(store::migrate(db, store::embedded_migrations()).is_ok());
  BOOST_REQUIRE(db.execute("DELETE FROM rate_limit_counters").is_ok());
  ratelimit::Limiter a(db);
  ratelimit::Limiter b(other_worker);
  const int64_t t = 1'800'000'020;  // 20 s into a minute window
  // Three allowed per minute, counted across both "workers".
  BOOST_TEST(a.hit("dcr:ip:1", 3, 60, t)->allowed);
  BOOST_TEST(b.hit("dcr:ip:1", 3, 60, t + 1)->allowed);
  BOOST_TEST(a.hit("dcr:ip:1", 3, 60, t + 2)->allowed);
  auto refused = b.hit("dcr:ip:1", 3, 60, t + 10);
  BOOST_REQUIRE(refused.is_ok());
  BOOST_TEST(!refused->allowed);
  BOOST_TEST(refused->retry_after_seconds == 30);  // until the window ends
  // Another bucket is independent; the next window starts from zero.
  BOOST_TEST(a.hit("dcr:ip:2", 3, 60, t + 10)->allowed);
  BOOST_TEST(a.hit("dcr:ip:1", 3, 60, t + 40)->allowed);
  // 0 means unlimited and writes nothing.
  for (int i = 0; i < 5; ++i) BOOST_TEST(a.hit("x", 0, 60, t)->allowed);
  auto st = ratelimit::too_many_requests(*refused, "registrations");
  BOOST_TEST(st.code() == Code::kResourceExhausted);
  BOOST_TEST(st.reason() == "temporarily_unavailable");
  BOOST_TEST(st.retry_after() == 30);
  BOOST_TEST(a.prune(t + 2 * 86400).is_ok());
  BOOST_TEST((*db.query("SELECT COUNT(*) FROM rate_limit_counters"))[0].i64(0) == 0);
}
