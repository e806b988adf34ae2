#define BOOST_TEST_MODULE grants
#include "tokens/grants.h"

#include <boost/test/unit_test.hpp>

#include "clients/resources.h"
#include "core/ids.h"
#include "crypto/hash.h"
#include "db_fixture.h"
#include "store/migrate.h"
#include "tokens/access_token.h"

using namespace portcullis;
using namespace portcullis::oauth;

namespace {

constexpr int64_t kNow = 1'800'000'000;
constexpr int64_t kIdle = 3600;

struct Fixture {
  std::optional<config::Config> config = testing::test_config();
  std::optional<store::Db> db;
  std::string user_id = new_id("usr_");
  std::optional<Resource> resource;
  Grant grant;

  Fixture() {
    db.emplace(config->db);
    BOOST_REQUIRE(store::migrate(*db, store::embedded_migrations()).is_ok());
    BOOST_REQUIRE(db->execute("INSERT INTO users (id, email, metadata, create_time, update_time) "
                              "VALUES (?, ?, '{}', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
                              {user_id, user_id + "@example.com"})
                      .is_ok());
    ResourceFields fields;
    fields.name = "Grants test";
    fields.server_url = "https://" + user_id + ".example/mcp";
    fields.access_token_ttl_seconds = 600;
    auto made = ResourceStore(*db).create(fields);
    BOOST_REQUIRE_MESSAGE(made.is_ok(), made.status().to_string());
    resource = *made;
    grant.user_id = user_id;
    grant.client_id = "dcr_01jd3k0000000000000000000a";
    grant.resource_id = resource->id;
    grant.scope = "todo:read";
    grant.auth_time = kNow;
    grant.absolute_expires_at = kNow + 86400;
    BOOST_REQUIRE(GrantStore(*db).create(grant).is_ok());
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(one_read_holds_what_a_refresh_decides_on, Fixture) {
  GrantStore grants(*db);
  auto token = grants.issue_refresh_token(grant, kNow, kIdle);
  BOOST_REQUIRE(token.is_ok());
  auto state = grants.find_refresh_token(*token);
  BOOST_REQUIRE_MESSAGE(state.is_ok(), state.status().to_string());
  BOOST_TEST(state->grant.id == grant.id);
  BOOST_TEST(state->expires_at == kNow + kIdle);
  BOOST_TEST(!state->rotated);
  BOOST_TEST(state->user_active.value_or(false));
  BOOST_REQUIRE(state->resource.has_value());
  BOOST_TEST(state->resource->server_url == resource->server_url);
  BOOST_TEST(state->resource->access_token_ttl_seconds == 600);
  // A deactivated user and a deleted resource show in the same read.
  BOOST_REQUIRE(db->execute("UPDATE users SET active = FALSE WHERE id = ?", {user_id}).is_ok());
  BOOST_REQUIRE(ResourceStore(*db).remove(resource->id).is_ok());
  state = grants.find_refresh_token(*token);
  BOOST_REQUIRE(state.is_ok());
  BOOST_TEST(!*state->user_active);
  BOOST_TEST(!state->resource.has_value());
  BOOST_TEST(state->grant.revoked_at.has_value());  // deleting the resource revoked the grant
  BOOST_TEST(grants.find_refresh_token("unknown").status().code() == Code::kNotFound);
}

BOOST_FIXTURE_TEST_CASE(a_token_is_rotated_once_whoever_tries_second, Fixture) {
  GrantStore grants(*db);
  store::Db other_worker(config->db);
  GrantStore elsewhere(other_worker);
  auto first = grants.issue_refresh_token(grant, kNow, kIdle);
  BOOST_REQUIRE(first.is_ok());
  auto second = grants.rotate_refresh_token(grant, *first, kNow + 1, kIdle);
  BOOST_REQUIRE_MESSAGE(second.is_ok(), second.status().to_string());
  // The other worker read `first` before the rotation landed: its own rotation must lose.
  auto lost = elsewhere.rotate_refresh_token(grant, *first, kNow + 1, kIdle);
  BOOST_TEST(lost.status().code() == Code::kAlreadyExists);
  BOOST_TEST(grants.find_refresh_token(*first)->rotated);
  BOOST_TEST(!grants.find_refresh_token(*second)->rotated);
  // A token rotated before migration 0009 is recognised by rotated_at.
  auto legacy = grants.issue_refresh_token(grant, kNow, kIdle);
  BOOST_REQUIRE(legacy.is_ok());
  BOOST_REQUIRE(db->execute("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ?",
                            {kNow, crypto::sha256(*legacy)})
                    .is_ok());
  BOOST_TEST(grants.find_refresh_token(*legacy)->rotated);
  // The idle expiry never passes the grant's absolute one.
  auto late = grants.rotate_refresh_token(grant, *second, grant.absolute_expires_at - 10, kIdle);
  BOOST_REQUIRE(late.is_ok());
  BOOST_TEST(grants.find_refresh_token(*late)->expires_at == grant.absolute_expires_at);
}

BOOST_FIXTURE_TEST_CASE(access_tokens_die_with_their_grant_or_alone, Fixture) {
  GrantStore grants(*db);
  const std::string jti = grant.id + ".abcdefghijklmnopqrstuv";
  BOOST_TEST(grant_of_jti(jti).value_or("") == grant.id);
  BOOST_TEST(!grant_of_jti("abcdefghijklmnopqrstuv").has_value());
  BOOST_TEST(!grant_of_jti("usr_x.abc").has_value());
  BOOST_TEST(!*grants.is_access_token_revoked(jti));
  BOOST_TEST(!*grants.is_access_token_revoked("plain-random-jti"));
  // One token alone: the deny-list.
  const std::string sibling = grant.id + ".0123456789abcdefghijkl";
  BOOST_REQUIRE(grants.revoke_access_token(sibling, kNow + 600, kNow).is_ok());
  BOOST_TEST(*grants.is_access_token_revoked(sibling));
  BOOST_TEST(!*grants.is_access_token_revoked(jti));
  BOOST_REQUIRE(grants.revoke_access_token("plain-random-jti", kNow + 600, kNow).is_ok());
  BOOST_TEST(*grants.is_access_token_revoked("plain-random-jti"));
  // The grant: every token it issued, with no row per token.
  BOOST_REQUIRE(grants.revoke(grant.id, "test", kNow).is_ok());
  BOOST_TEST(*grants.is_access_token_revoked(jti));
  // A grant that is gone (pruned) revokes its tokens too.
  BOOST_TEST(*grants.is_access_token_revoked(new_id("grt_") + ".abcdefghijklmnopqrstuv"));
}
