#define BOOST_TEST_MODULE grants
#include "tokens/grants.h"

#include <boost/test/unit_test.hpp>
#include <tuple>

#include "clients/resources.h"
#include "core/ids.h"
#include "crypto/hash.h"
#include "db_fixture.h"
#include "events/recorder.h"
#include "store/migrate.h"
#include "tokens/access_token.h"
#include "tokens/codes.h"

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

BOOST_FIXTURE_TEST_CASE(a_code_makes_one_grant_whoever_tries_second, Fixture) {
  GrantStore grants(*db);
  store::Db other_worker(config->db);
  GrantStore elsewhere(other_worker);
  CodeBinding binding;
  binding.client_id = grant.client_id;
  binding.resource_id = grant.resource_id;
  binding.redirect_uri = "http://127.0.0.1:3000/callback";
  binding.code_challenge = std::string(43, 'c');
  binding.scope = grant.scope;
  binding.user_id = user_id;
  binding.auth_time = kNow;
  const SealedCode code = sealed_code_for(binding, new_id("grt_"), kNow);
  BOOST_TEST(code.expires_at == kNow + kCodeLifetimeSeconds);
  auto issued = [&](const Grant& g) {
    events::Event e = events::Event::of(events::type::kTokenIssued, {.user_id = user_id});
    e.data["grant_id"] = g.id;
    events::Recorder::stamp(e);
    return e;
  };
  auto count = [&](const std::string& sql, const std::string& id) {
    auto r = db->query(sql, {id});
    BOOST_REQUIRE(r.is_ok());
    return (*r)[0].i64(0);
  };
  // An exchange of a code: the grant it names, with an event of its own.
  auto exchange_of = [&](GrantStore& store, const std::string& grant_id, bool refresh) {
    Grant g = grant;
    g.id = grant_id;
    const events::Event e = issued(g);
    auto token = store.create_from_code(g, kNow, kIdle, refresh, e);
    return std::make_tuple(g, e, token);
  };
  // Before its exchange the code's state says: unused, its user active, its resource there.
  auto before = read_code_state(*db, code);
  BOOST_REQUIRE_MESSAGE(before.is_ok(), before.status().to_string());
  BOOST_TEST(!before->used);
  BOOST_TEST(before->user_active.value_or(false));
  BOOST_REQUIRE(before->resource.has_value());
  BOOST_TEST(before->resource->id == resource->id);
  BOOST_TEST(before->resource->server_url == resource->server_url);
  // The first exchange stores the grant, its refresh token and the event.
  auto [won, won_event, token] = exchange_of(grants, code.grant_id, true);
  BOOST_REQUIRE_MESSAGE(token.is_ok(), token.status().to_string());
  BOOST_REQUIRE(token->has_value());
  BOOST_TEST(won.id == code.grant_id);
  BOOST_TEST(read_code_state(*db, code)->used);
  BOOST_TEST(grants.find_refresh_token(**token)->grant.id == won.id);
  BOOST_TEST(grants.find_refresh_token(**token)->expires_at == kNow + kIdle);
  BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", won_event.id) == 1);
  BOOST_TEST(count("SELECT COUNT(*) FROM event_outbox WHERE event_id = ?", won_event.id) == 1);
  // Another worker's exchange of the same code (it read the code's state before the grant
  // landed) loses: AlreadyExists, and nothing of it is written.
  auto [lost, lost_event, none] = exchange_of(elsewhere, code.grant_id, true);
  BOOST_TEST(none.status().code() == Code::kAlreadyExists);
  // The grant keeps the winner's one refresh token.
  BOOST_TEST(count("SELECT COUNT(*) FROM refresh_tokens WHERE grant_id = ?", lost.id) == 1);
  BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", lost_event.id) == 0);
  BOOST_TEST(count("SELECT COUNT(*) FROM event_outbox WHERE event_id = ?", lost_event.id) == 0);
  // A client without the refresh_token grant: the grant and the event, no refresh token.
  const SealedCode second = sealed_code_for(binding, new_id("grt_"), kNow);
  auto [bare, bare_event, no_token] = exchange_of(grants, second.grant_id, false);
  BOOST_REQUIRE_MESSAGE(no_token.is_ok(), no_token.status().to_string());
  BOOST_TEST(!no_token->has_value());
  BOOST_TEST(count("SELECT COUNT(*) FROM grants WHERE id = ?", bare.id) == 1);
  BOOST_TEST(count("SELECT COUNT(*) FROM refresh_tokens WHERE grant_id = ?", bare.id) == 0);
  BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", bare_event.id) == 1);
  // A code whose user and resource are gone: the state says so.
  SealedCode orphan = second;
  orphan.user_id = new_id("usr_");
  orphan.resource_id = new_id("res_");
  orphan.grant_id = new_id("grt_");
  auto gone = read_code_state(*db, orphan);
  BOOST_REQUIRE(gone.is_ok());
  BOOST_TEST(!gone->used);
  BOOST_TEST(!gone->user_active.has_value());
  BOOST_TEST(!gone->resource.has_value());
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
