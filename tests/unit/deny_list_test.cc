#define BOOST_TEST_MODULE deny_list
#include "validation/deny_list.h"

#include <boost/test/unit_test.hpp>

#include "crypto/random.h"
#include "db_fixture.h"
#include "store/migrate.h"
#include "tokens/grants.h"

using namespace portcullis;

BOOST_AUTO_TEST_CASE(revocations_reach_the_worker_set_on_the_next_due_sync) {
  auto config = testing::test_config();
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

// Revoking a grant (refresh-token reuse, a revoked refresh token, a deactivated user...) revokes
// every access token issued under it: their jtis name the grant, and no row exists per token.
BOOST_AUTO_TEST_CASE(a_revoked_grant_revokes_the_tokens_whose_jti_names_it) {
  auto config = testing::test_config();
  store::Db db(config->db);
  BOOST_REQUIRE(store::migrate(db, store::embedded_migrations()).is_ok());
  oauth::GrantStore grants(db);
  const int64_t now = 1'800'100'000;
  oauth::Grant revoked{.user_id = "usr_" + std::string(26, '0'),
                       .client_id = "dcr_deny_list_test",
                       .resource_id = "res_" + std::string(26, '0'),
                       .scope = "demo:read",
                       .auth_time = now,
                       .absolute_expires_at = now + 86400};
  oauth::Grant standing = revoked;
  BOOST_REQUIRE(grants.create(revoked).is_ok());
  BOOST_REQUIRE(grants.create(standing).is_ok());
  const std::string revoked_jti = revoked.id + "." + crypto::random_token(16);
  const std::string standing_jti = standing.id + "." + crypto::random_token(16);

  validation::DenyList deny(1000);
  BOOST_REQUIRE(deny.sync_if_due(db, 0, now).is_ok());
  BOOST_TEST(!deny.revoked(revoked_jti));

  BOOST_REQUIRE(grants.revoke(revoked.id, "test", now + 1).is_ok());
  BOOST_REQUIRE(deny.sync_if_due(db, 1000, now + 1).is_ok());
  BOOST_TEST(deny.revoked(revoked_jti));

  // What a resource server answers: the refusal of a revoked token, in the scheme it came in.
  validation::Verdict accepted;
  accepted.outcome = validation::Outcome::kValid;
  accepted.scheme = validation::TokenScheme::kDPoP;
  auto claims = std::make_shared<validation::AccessClaims>();
  claims->jti = revoked_jti;
  accepted.claims = claims;
  validation::Verdict standing_verdict = accepted;
  auto standing_claims = std::make_shared<validation::AccessClaims>();
  standing_claims->jti = standing_jti;
  standing_verdict.claims = standing_claims;
  BOOST_TEST(deny.refuse_if_revoked(accepted));
  BOOST_TEST(accepted.http_status() == 401);
  BOOST_TEST(accepted.reason == "token has been revoked");
  BOOST_TEST((accepted.scheme == validation::TokenScheme::kDPoP));
  BOOST_TEST(!deny.refuse_if_revoked(standing_verdict));
  BOOST_TEST(standing_verdict.valid());
  BOOST_TEST(deny.revoked(revoked.id + ".another-token-of-the-grant"));
  BOOST_TEST(!deny.revoked(standing_jti));

  // Kept while a token of the grant could still be valid (the longest lifetime is a day),
  // forgotten after.
  BOOST_REQUIRE(deny.sync_if_due(db, 2000, now + 86400).is_ok());
  BOOST_TEST(deny.revoked(revoked_jti));
  BOOST_REQUIRE(deny.sync_if_due(db, 3000, now + 86400 + 120).is_ok());
  BOOST_TEST(!deny.revoked(revoked_jti));
}
