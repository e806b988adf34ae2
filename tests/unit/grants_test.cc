#define BOOST_TEST_MODULE grants
#include "tokens/grants.h"

#include <boost/test/unit_test.hpp>
#include <tuple>

#include "clients/clients.h"
#include "clients/resources.h"
#include "core/ids.h"
#include "crypto/base64.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "db_fixture.h"
#include "events/recorder.h"
#include "store/migrate.h"
#include "tokens/access_token.h"
#include "tokens/codes.h"
#include "tokens/sealed_refresh.h"
#include "tokens/sealed_value.h"

using namespace portcullis;
using namespace portcullis::oauth;

namespace {

constexpr int64_t kNow = 1'800'000'000;
constexpr int64_t kIdle = 3600;

crypto::MasterKey fresh_master_key() {
  return crypto::MasterKey::from_base64(crypto::base64_encode(crypto::random_bytes(32))).value();
}

struct Fixture {
  std::optional<config::Config> config = testing::test_config();
  std::optional<store::Db> db;
  std::string user_id = new_id("usr_");
  std::optional<Resource> resource;
  Grant grant;
  const crypto::MasterKey key = fresh_master_key();

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

  // A refresh token of the grant as they were issued before sealed ones: stored by its hash.
  std::string stored_token(int64_t expires_at) {
    const std::string token = crypto::random_token(32);
    BOOST_REQUIRE(db->execute("INSERT INTO refresh_tokens (token_hash, grant_id, create_time, "
                              "expires_at) VALUES (?, ?, UTC_TIMESTAMP(6), ?)",
                              {crypto::sha256(token), grant.id, expires_at})
                      .is_ok());
    return token;
  }

  int64_t count(const std::string& sql, const std::string& id) {
    auto r = db->query(sql, {id});
    BOOST_REQUIRE(r.is_ok());
    return (*r)[0].i64(0);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(one_read_holds_what_a_refresh_decides_on, Fixture) {
  GrantStore grants(*db);
  auto sealed = grants.issue_refresh_token(key, grant, kNow, kIdle);
  BOOST_REQUIRE(sealed.is_ok());
  BOOST_TEST(!is_stored_refresh_token(*sealed));
  const std::string stored = stored_token(kNow + kIdle);
  for (const std::string& token : {*sealed, stored}) {
    auto state = grants.find_refresh_token(key, token);
    BOOST_REQUIRE_MESSAGE(state.is_ok(), state.status().to_string());
    BOOST_TEST(state->grant.id == grant.id);
    BOOST_TEST(state->grant.client_id == grant.client_id);
    BOOST_TEST(state->expires_at == kNow + kIdle);
    BOOST_TEST(!state->rotated);
    BOOST_TEST(state->generation.has_value() == (token == *sealed));
    BOOST_TEST(state->user_active.value_or(false));
    BOOST_REQUIRE(state->resource.has_value());
    BOOST_TEST(state->resource->server_url == resource->server_url);
    BOOST_TEST(state->resource->access_token_ttl_seconds == 600);
  }
  // A deactivated user and a deleted resource show in the same read.
  BOOST_REQUIRE(db->execute("UPDATE users SET active = FALSE WHERE id = ?", {user_id}).is_ok());
  BOOST_REQUIRE(ResourceStore(*db).remove(resource->id).is_ok());
  for (const std::string& token : {*sealed, stored}) {
    auto state = grants.find_refresh_token(key, token);
    BOOST_REQUIRE(state.is_ok());
    BOOST_TEST(!*state->user_active);
    BOOST_TEST(!state->resource.has_value());
    BOOST_TEST(state->grant.revoked_at.has_value());  // deleting the resource revoked the grant
  }
  BOOST_TEST(grants.find_refresh_token(key, "unknown").status().code() == Code::kNotFound);
  BOOST_TEST(grants.find_refresh_token(key, std::string(43, 'A')).status().code() ==
             Code::kNotFound);
}

BOOST_FIXTURE_TEST_CASE(a_sealed_token_is_rotated_once_whoever_tries_second, Fixture) {
  GrantStore grants(*db);
  store::Db other_worker(config->db);
  GrantStore elsewhere(other_worker);
  auto first = grants.issue_refresh_token(key, grant, kNow, kIdle);
  BOOST_REQUIRE(first.is_ok());
  auto presented = grants.find_refresh_token(key, *first);
  BOOST_REQUIRE(presented.is_ok());
  BOOST_TEST(*presented->generation == 0);
  auto second = grants.rotate_refresh_token(key, *presented, *first, kNow + 1, kIdle);
  BOOST_REQUIRE_MESSAGE(second.is_ok(), second.status().to_string());
  BOOST_TEST(!is_stored_refresh_token(*second));
  // The other worker read `first` before the rotation landed: its own rotation must lose.
  auto lost = elsewhere.rotate_refresh_token(key, *presented, *first, kNow + 1, kIdle);
  BOOST_TEST(lost.status().code() == Code::kAlreadyExists);
  BOOST_TEST(grants.find_refresh_token(key, *first)->rotated);
  auto current = grants.find_refresh_token(key, *second);
  BOOST_REQUIRE(current.is_ok());
  BOOST_TEST(!current->rotated);
  BOOST_TEST(*current->generation == 1);
  BOOST_TEST(current->expires_at == kNow + 1 + kIdle);
  // Nothing is stored for a sealed token: the grant's row moved.
  BOOST_TEST(count("SELECT COUNT(*) FROM refresh_tokens WHERE grant_id = ?", grant.id) == 0);
  BOOST_TEST(count("SELECT refresh_generation FROM grants WHERE id = ?", grant.id) == 1);
  // The idle expiry never passes the grant's absolute one.
  auto late =
      grants.rotate_refresh_token(key, *current, *second, grant.absolute_expires_at - 10, kIdle);
  BOOST_REQUIRE(late.is_ok());
  BOOST_TEST(grants.find_refresh_token(key, *late)->expires_at == grant.absolute_expires_at);
  // A revoked grant's current token does not rotate either.
  auto last = grants.find_refresh_token(key, *late);
  BOOST_REQUIRE(last.is_ok());
  BOOST_REQUIRE(grants.revoke(grant.id, "test", kNow).is_ok());
  BOOST_TEST(grants.rotate_refresh_token(key, *last, *late, kNow + 2, kIdle).status().code() ==
             Code::kAlreadyExists);
  BOOST_TEST(count("SELECT refresh_generation FROM grants WHERE id = ?", grant.id) == 2);
}

BOOST_FIXTURE_TEST_CASE(a_sealed_token_alone_rotates_only_a_live_grant_of_an_active_user, Fixture) {
  GrantStore grants(*db);
  grant.organization_id = "";
  auto first = grants.issue_refresh_token(key, grant, kNow, kIdle);
  BOOST_REQUIRE(first.is_ok());
  const std::optional<SealedRefresh> sealed = open_refresh_token(key, *first);
  BOOST_REQUIRE(sealed.has_value());
  // Sealed for this client only.
  BOOST_TEST(!opened_refresh_state(*sealed, "dcr_other").has_value());
  std::optional<RefreshTokenState> opened = opened_refresh_state(*sealed, grant.client_id);
  BOOST_REQUIRE(opened.has_value());
  // The token tells what the read would: the grant's fields, its generation, its expiry.
  const RefreshTokenState read = grants.find_refresh_token(key, *first).value();
  BOOST_TEST(opened->grant.id == read.grant.id);
  BOOST_TEST(opened->grant.user_id == read.grant.user_id);
  BOOST_TEST(opened->grant.resource_id == read.grant.resource_id);
  BOOST_TEST(opened->grant.scope == read.grant.scope);
  BOOST_TEST(opened->grant.auth_time == read.grant.auth_time);
  BOOST_TEST(opened->grant.absolute_expires_at == read.grant.absolute_expires_at);
  BOOST_TEST(opened->grant.dpop_jkt == read.grant.dpop_jkt);
  BOOST_TEST(*opened->generation == *read.generation);
  BOOST_TEST(opened->expires_at == read.expires_at);
  // Its rotation is the one write, and a second presentation of the same generation loses.
  auto second = grants.rotate_refresh_token(key, *opened, *first, kNow + 1, kIdle);
  BOOST_REQUIRE_MESSAGE(second.is_ok(), second.status().to_string());
  BOOST_TEST(grants.rotate_refresh_token(key, *opened, *first, kNow + 1, kIdle).status().code() ==
             Code::kAlreadyExists);
  auto next = opened_refresh_state(*open_refresh_token(key, *second), grant.client_id);
  BOOST_REQUIRE(next.has_value());
  BOOST_TEST(*next->generation == 1);
  // Past the grant's absolute expiry, or with the user deactivated, the rotation matches nothing
  // and leaves the generation where it was.
  BOOST_TEST(grants.rotate_refresh_token(key, *next, *second, grant.absolute_expires_at, kIdle)
                 .status()
                 .code() == Code::kAlreadyExists);
  BOOST_REQUIRE(db->execute("UPDATE users SET active = FALSE WHERE id = ?", {user_id}).is_ok());
  BOOST_TEST(grants.rotate_refresh_token(key, *next, *second, kNow + 2, kIdle).status().code() ==
             Code::kAlreadyExists);
  BOOST_TEST(count("SELECT refresh_generation FROM grants WHERE id = ?", grant.id) == 1);
  BOOST_REQUIRE(db->execute("UPDATE users SET active = TRUE WHERE id = ?", {user_id}).is_ok());
  BOOST_TEST(grants.rotate_refresh_token(key, *next, *second, kNow + 2, kIdle).is_ok());
}

BOOST_FIXTURE_TEST_CASE(a_sealed_token_the_grant_does_not_know_is_unknown, Fixture) {
  GrantStore grants(*db);
  const std::string digest = binding_digest(grant.client_id);
  auto sealed = [&](const crypto::MasterKey& with, const std::string& grant_id, int64_t generation,
                    const std::string& client_digest) {
    return seal_refresh_token(with, {.grant_id = grant_id,
                                     .generation = generation,
                                     .expires_at = kNow + kIdle,
                                     .client_digest = client_digest})
        .value();
  };
  BOOST_TEST(grants.find_refresh_token(key, sealed(key, grant.id, 0, digest)).is_ok());
  // Sealed under another master key: it does not open.
  const crypto::MasterKey other = fresh_master_key();
  BOOST_TEST(grants.find_refresh_token(key, sealed(other, grant.id, 0, digest)).status().code() ==
             Code::kNotFound);
  // A grant that does not exist, a generation it never reached, another client's digest.
  BOOST_TEST(
      grants.find_refresh_token(key, sealed(key, new_id("grt_"), 0, digest)).status().code() ==
      Code::kNotFound);
  BOOST_TEST(grants.find_refresh_token(key, sealed(key, grant.id, 1, digest)).status().code() ==
             Code::kNotFound);
  BOOST_TEST(grants.find_refresh_token(key, sealed(key, grant.id, 0, binding_digest("dcr_other")))
                 .status()
                 .code() == Code::kNotFound);
}

BOOST_FIXTURE_TEST_CASE(a_stored_token_is_rotated_once_whoever_tries_second, Fixture) {
  // Tokens issued before sealed ones rotate into stored tokens, as they did.
  GrantStore grants(*db);
  store::Db other_worker(config->db);
  GrantStore elsewhere(other_worker);
  const std::string first = stored_token(kNow + kIdle);
  auto presented = grants.find_refresh_token(key, first);
  BOOST_REQUIRE(presented.is_ok());
  BOOST_TEST(!presented->generation.has_value());
  auto second = grants.rotate_refresh_token(key, *presented, first, kNow + 1, kIdle);
  BOOST_REQUIRE_MESSAGE(second.is_ok(), second.status().to_string());
  BOOST_TEST(is_stored_refresh_token(*second));
  // The other worker read `first` before the rotation landed: its own rotation must lose.
  auto lost = elsewhere.rotate_refresh_token(key, *presented, first, kNow + 1, kIdle);
  BOOST_TEST(lost.status().code() == Code::kAlreadyExists);
  BOOST_TEST(grants.find_refresh_token(key, first)->rotated);
  BOOST_TEST(!grants.find_refresh_token(key, *second)->rotated);
  // A token rotated before migration 0009 is recognised by rotated_at.
  const std::string legacy = stored_token(kNow + kIdle);
  BOOST_REQUIRE(db->execute("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ?",
                            {kNow, crypto::sha256(legacy)})
                    .is_ok());
  BOOST_TEST(grants.find_refresh_token(key, legacy)->rotated);
  // The idle expiry never passes the grant's absolute one.
  auto late = grants.rotate_refresh_token(key, *grants.find_refresh_token(key, *second), *second,
                                          grant.absolute_expires_at - 10, kIdle);
  BOOST_REQUIRE(late.is_ok());
  BOOST_TEST(grants.find_refresh_token(key, *late)->expires_at == grant.absolute_expires_at);
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
  // An exchange of a code: the grant it names, with an event of its own.
  auto exchange_of = [&](GrantStore& store, const std::string& grant_id, bool refresh) {
    Grant g = grant;
    g.id = grant_id;
    const events::Event e = issued(g);
    auto token = store.create_from_code(key, g, kNow, kIdle, refresh, e, CodeGrantChecks::kNone);
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
  // The first exchange stores the grant and the event; its refresh token is sealed.
  auto [won, won_event, token] = exchange_of(grants, code.grant_id, true);
  BOOST_REQUIRE_MESSAGE(token.is_ok(), token.status().to_string());
  BOOST_REQUIRE(token->has_value());
  BOOST_TEST(won.id == code.grant_id);
  BOOST_TEST(read_code_state(*db, code)->used);
  BOOST_TEST(grants.find_refresh_token(key, **token)->grant.id == won.id);
  BOOST_TEST(grants.find_refresh_token(key, **token)->expires_at == kNow + kIdle);
  BOOST_TEST(*grants.find_refresh_token(key, **token)->generation == 0);
  BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", won_event.id) == 1);
  BOOST_TEST(count("SELECT COUNT(*) FROM event_outbox WHERE event_id = ?", won_event.id) == 1);
  // Another worker's exchange of the same code (it read the code's state before the grant
  // landed) loses: AlreadyExists, and nothing of it is written.
  auto [lost, lost_event, none] = exchange_of(elsewhere, code.grant_id, true);
  BOOST_TEST(none.status().code() == Code::kAlreadyExists);
  // The grant keeps the winner's refresh token, and none is stored.
  BOOST_TEST(grants.find_refresh_token(key, **token).is_ok());
  BOOST_TEST(count("SELECT COUNT(*) FROM refresh_tokens WHERE grant_id = ?", lost.id) == 0);
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

// The exchange that read nothing first (sql/0096_code_exchange_one_statement.sql): its write
// alone refuses a user that is deactivated or gone, a client or resource that is gone, and a
// grant id that exists, each with AlreadyExists and nothing written.
BOOST_FIXTURE_TEST_CASE(
    a_code_alone_makes_a_grant_only_for_an_active_user_and_a_live_client_and_resource, Fixture) {
  GrantStore grants(*db);
  ClientMetadata metadata;
  metadata.redirect_uris = {"http://127.0.0.1:3000/callback"};
  metadata.token_endpoint_auth_method = "none";
  metadata.client_name = "Grants test";
  auto client = ClientStore(*db).register_client(ClientInfo::Kind::kDcr, resource->id, metadata);
  BOOST_REQUIRE_MESSAGE(client.is_ok(), client.status().to_string());
  // One exchange of a code for `g` (a fresh grant id each), checked in the write.
  auto exchange = [&](Grant g) {
    g.id = new_id("grt_");
    g.client_id = client->client_id;
    events::Event e = events::Event::of(events::type::kTokenIssued, {.user_id = g.user_id});
    e.data["grant_id"] = g.id;
    events::Recorder::stamp(e);
    auto token =
        grants.create_from_code(key, g, kNow, kIdle, true, e, CodeGrantChecks::kInTheWrite);
    return std::make_tuple(g, e, token);
  };
  auto written = [&](const Grant& g, const events::Event& e) {
    return count("SELECT COUNT(*) FROM grants WHERE id = ?", g.id) +
           count("SELECT COUNT(*) FROM events WHERE id = ?", e.id) +
           count("SELECT COUNT(*) FROM event_outbox WHERE event_id = ?", e.id);
  };
  // Everything in place: the grant, its event and mark, and its sealed refresh token.
  auto [won, won_event, token] = exchange(grant);
  BOOST_REQUIRE_MESSAGE(token.is_ok(), token.status().to_string());
  BOOST_REQUIRE(token->has_value());
  BOOST_TEST(written(won, won_event) == 3);
  auto found = grants.find_refresh_token(key, **token);
  BOOST_REQUIRE(found.is_ok());
  BOOST_TEST(found->grant.id == won.id);
  BOOST_TEST(found->grant.user_id == user_id);
  BOOST_TEST(found->grant.resource_id == resource->id);
  BOOST_TEST(found->grant.client_id == client->client_id);
  // The same grant id again (a replay, or a concurrent exchange that lost): nothing written.
  {
    Grant again = won;
    events::Event e = events::Event::of(events::type::kTokenIssued, {.user_id = user_id});
    events::Recorder::stamp(e);
    auto second =
        grants.create_from_code(key, again, kNow, kIdle, true, e, CodeGrantChecks::kInTheWrite);
    BOOST_TEST(second.status().code() == Code::kAlreadyExists);
    BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", e.id) == 0);
  }
  // Each of the owners that a read would have found wanting: refused in the write, nothing
  // written, and the same exchange goes through again once it is put back.
  auto refused = [&](const Grant& g, const char* what) {
    auto [lost, lost_event, none] = exchange(g);
    BOOST_TEST(none.status().code() == Code::kAlreadyExists, what);
    BOOST_TEST(written(lost, lost_event) == 0, what);
  };
  BOOST_REQUIRE(db->execute("UPDATE users SET active = FALSE WHERE id = ?", {user_id}).is_ok());
  refused(grant, "a deactivated user");
  BOOST_REQUIRE(db->execute("UPDATE users SET active = TRUE WHERE id = ?", {user_id}).is_ok());
  Grant other = grant;
  other.user_id = new_id("usr_");
  refused(other, "a user that does not exist");
  other = grant;
  other.resource_id = new_id("res_");
  refused(other, "a resource that does not exist");
  BOOST_TEST(std::get<2>(exchange(grant)).is_ok());
  // The client deleted (its grants revoked): refused, where a worker's copy of it would not be.
  BOOST_REQUIRE(ClientStore(*db).remove(resource->id, client->client_id).is_ok());
  refused(grant, "a deleted client");
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
