#define BOOST_TEST_MODULE grants
#include "tokens/grants.h"

#include <boost/test/unit_test.hpp>
#include <functional>
#include <tuple>
#include <vector>

#include "clients/resources.h"
#include "core/ids.h"
#include "crypto/hash.h"
#include "db_fixture.h"
#include "events/event_store.h"
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
  CodeStore codes(*db);
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
  auto exchange_of = [&](GrantStore& store, const std::string& code, bool refresh) {
    Grant g = grant;
    g.id = new_id("grt_");
    const events::Event e = issued(g);
    auto token = store.create_from_code(g, code, kNow, kIdle, refresh, e);
    return std::make_tuple(g, e, token);
  };
  auto code = codes.issue(binding, kNow);
  BOOST_REQUIRE(code.is_ok());
  // The first exchange claims the code, and stores the grant, its refresh token and the event.
  auto [won, won_event, token] = exchange_of(grants, *code, true);
  BOOST_REQUIRE_MESSAGE(token.is_ok(), token.status().to_string());
  BOOST_REQUIRE(token->has_value());
  auto stored = codes.find(*code);
  BOOST_REQUIRE(stored.is_ok());
  BOOST_TEST(stored->used_at.value_or(0) == kNow);
  BOOST_TEST(stored->grant_id == won.id);
  BOOST_TEST(grants.find_refresh_token(**token)->grant.id == won.id);
  BOOST_TEST(grants.find_refresh_token(**token)->expires_at == kNow + kIdle);
  BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", won_event.id) == 1);
  BOOST_TEST(count("SELECT COUNT(*) FROM event_outbox WHERE event_id = ?", won_event.id) == 1);
  // Another worker's exchange of the same code (it read the code before the claim landed)
  // loses: AlreadyExists, and nothing of it is written.
  auto [lost, lost_event, none] = exchange_of(elsewhere, *code, true);
  BOOST_TEST(none.status().code() == Code::kAlreadyExists);
  BOOST_TEST(count("SELECT COUNT(*) FROM grants WHERE id = ?", lost.id) == 0);
  BOOST_TEST(count("SELECT COUNT(*) FROM refresh_tokens WHERE grant_id = ?", lost.id) == 0);
  BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", lost_event.id) == 0);
  BOOST_TEST(count("SELECT COUNT(*) FROM event_outbox WHERE event_id = ?", lost_event.id) == 0);
  BOOST_TEST(codes.find(*code)->grant_id == won.id);
  // An unknown code is claimed by nobody either.
  auto [ghost, ghost_event, unknown] = exchange_of(grants, "no-such-code", true);
  BOOST_TEST(unknown.status().code() == Code::kAlreadyExists);
  BOOST_TEST(count("SELECT COUNT(*) FROM grants WHERE id = ?", ghost.id) == 0);
  // A client without the refresh_token grant: the grant and the event, no refresh token.
  auto second_code = codes.issue(binding, kNow);
  BOOST_REQUIRE(second_code.is_ok());
  auto [bare, bare_event, no_token] = exchange_of(grants, *second_code, false);
  BOOST_REQUIRE_MESSAGE(no_token.is_ok(), no_token.status().to_string());
  BOOST_TEST(!no_token->has_value());
  BOOST_TEST(count("SELECT COUNT(*) FROM grants WHERE id = ?", bare.id) == 1);
  BOOST_TEST(count("SELECT COUNT(*) FROM refresh_tokens WHERE grant_id = ?", bare.id) == 0);
  BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", bare_event.id) == 1);
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

BOOST_FIXTURE_TEST_CASE(a_refresh_is_one_statement_that_rotates_only_what_passes_its_checks,
                        Fixture) {
  GrantStore grants(*db);
  auto count = [&](const std::string& sql, const std::string& id) {
    auto r = db->query(sql, {id});
    BOOST_REQUIRE(r.is_ok());
    return (*r)[0].i64(0);
  };
  // A grant whose scope names are out of order and repeated, as an authorization request kept
  // them.
  Grant wide = grant;
  wide.id.clear();
  wide.scope = "todo:write todo:read todo:write";
  BOOST_REQUIRE(grants.create(wide).is_ok());
  auto ask = [&](const std::string& presented, const Grant& g,
                 const std::function<void(RefreshRequest&)>& edit) {
    events::Event e = events::Event::of(events::type::kTokenRefreshed, {.client_id = g.client_id});
    e.data["grant_type"] = "refresh_token";
    e.data["token_type"] = "Bearer";
    events::Recorder::stamp(e);
    RefreshRequest r;
    r.token = presented;
    r.client_id = g.client_id;
    r.now = kNow + 1;
    r.signing_algs = "RS256 EdDSA";
    r.idle_seconds = kIdle;
    r.event = &e;
    r.jti_random = "abcdefghijklmnopqrstuv";
    edit(r);
    auto out = grants.refresh(r);
    return std::make_pair(e.id, std::move(out));
  };
  auto token = grants.issue_refresh_token(wide, kNow, kIdle);
  BOOST_REQUIRE(token.is_ok());
  // Every refusal writes nothing and answers the state the worker decides from.
  const std::vector<std::pair<const char*, std::function<void(RefreshRequest&)>>> refusals = {
      {"another client", [](RefreshRequest& r) { r.client_id = "dcr_01jd3k0000000000000000000b"; }},
      {"the client id in other case",
       [](RefreshRequest& r) { r.client_id = "DCR_01JD3K0000000000000000000A"; }},
      {"another resource",
       [](RefreshRequest& r) { r.resource_key = crypto::sha256("https://other.example/mcp"); }},
      {"a resource that is no URL", [](RefreshRequest& r) { r.resource_key = std::string(); }},
      {"a wider scope", [](RefreshRequest& r) { r.scope = "todo:admin todo:read"; }},
      {"a scope in other case", [](RefreshRequest& r) { r.scope = "TODO:READ"; }},
      {"a prefix of a granted name", [](RefreshRequest& r) { r.scope = "todo"; }},
      {"expired", [](RefreshRequest& r) { r.now = kNow + kIdle; }},
      {"no key for the resource's algorithm", [](RefreshRequest& r) { r.signing_algs = "ES256"; }},
      {"no event: a read", [](RefreshRequest& r) { r.event = nullptr; }},
  };
  for (const auto& [what, edit] : refusals) {
    BOOST_TEST_CONTEXT(what) {
      auto [event_id, out] = ask(*token, wide, edit);
      BOOST_REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
      BOOST_TEST(!out->successor.has_value());
      BOOST_TEST(out->state.grant.id == wide.id);
      BOOST_TEST(out->state.grant.scope == wide.scope);
      BOOST_TEST(!out->state.rotated);
      BOOST_TEST(out->state.user_active.value_or(false));
      BOOST_REQUIRE(out->state.resource.has_value());
      BOOST_TEST(out->state.resource->server_url == resource->server_url);
      BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", event_id) == 0);
      BOOST_TEST(count("SELECT COUNT(*) FROM refresh_tokens WHERE parent_hash = ?",
                       crypto::sha256(*token)) == 0);
    }
  }
  BOOST_TEST(!grants.find_refresh_token(*token)->rotated);
  // A narrowing for the resource named in another spelling: rotated, with the event.
  auto [narrowed_id, narrowed] = ask(*token, wide, [&](RefreshRequest& r) {
    r.scope = "todo:read";
    r.resource_key = crypto::sha256(*canonical_server_url(resource->server_url + "/"));
  });
  BOOST_REQUIRE_MESSAGE(narrowed.is_ok(), narrowed.status().to_string());
  BOOST_REQUIRE(narrowed->successor.has_value());
  BOOST_TEST(!narrowed->state.rotated);
  BOOST_TEST(grants.find_refresh_token(*token)->rotated);
  auto successor = grants.find_refresh_token(*narrowed->successor);
  BOOST_REQUIRE(successor.is_ok());
  BOOST_TEST(successor->grant.id == wide.id);
  BOOST_TEST(successor->expires_at == kNow + 1 + kIdle);
  auto event_of = [&](const std::string& id) {
    auto r = db->query(
        "SELECT user_id, resource_id, client_id, JSON_VALUE(data, '$.grant_id'), "
        "JSON_VALUE(data, '$.jti'), JSON_VALUE(data, '$.scope'), JSON_VALUE(data, '$.grant_type'), "
        "JSON_TYPE(JSON_EXTRACT(data, '$.refresh_token_dpop_bound')), (SELECT COUNT(*) FROM "
        "event_outbox WHERE event_id = e.id) FROM events e WHERE id = ?",
        {id});
    BOOST_REQUIRE(r.is_ok());
    BOOST_REQUIRE(r->size() == 1);
    return (*r)[0];
  };
  store::Row e = event_of(narrowed_id);
  BOOST_TEST(e.str(0) == user_id);
  BOOST_TEST(e.str(1) == resource->id);
  BOOST_TEST(e.str(2) == wide.client_id);
  BOOST_TEST(e.str(3) == wide.id);
  BOOST_TEST(e.str(4) == wide.id + ".abcdefghijklmnopqrstuv");
  BOOST_TEST(e.str(5) == "todo:read");
  BOOST_TEST(e.str(6) == "refresh_token");
  BOOST_TEST(e.is_null(7));
  BOOST_TEST(e.i64(8) == 1);
  // No scope asked: the event names the grant's, distinct and sorted, as the answer does.
  auto [next_id, next] = ask(*narrowed->successor, wide, [](RefreshRequest&) {});
  BOOST_REQUIRE(next.is_ok());
  BOOST_REQUIRE(next->successor.has_value());
  BOOST_TEST(event_of(next_id).str(5) == "todo:read todo:write");
  // The rotated-out token again: its state says so, and nothing is written.
  auto [reused_id, reused] = ask(*token, wide, [](RefreshRequest&) {});
  BOOST_REQUIRE(reused.is_ok());
  BOOST_TEST(!reused->successor.has_value());
  BOOST_TEST(reused->state.rotated);
  BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", reused_id) == 0);
  // A rotation whose INSERT meets a duplicate key (as one that lost to a concurrent rotation
  // does) writes nothing and answers the state as rotated.
  const std::string live = *next->successor;
  const std::string taken = *narrowed->successor;  // a stored token's hash as the successor's
  store::Params call{
      crypto::sha256(live),    wide.client_id, kNow + 1, "", nullptr, nullptr, "RS256", kIdle,
      "abcdefghijklmnopqrstuv"};
  events::Event lost = events::Event::of(events::type::kTokenRefreshed, {});
  events::Recorder::stamp(lost);
  for (auto& v : events::event_row(lost)) call.push_back(std::move(v));
  call.emplace_back(crypto::sha256(taken));
  call.emplace_back(std::string("2027-01-15 08:00:00.000000"));
  auto collided = db->execute_returning(
      "CALL portcullis_refresh(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      call);
  BOOST_REQUIRE_MESSAGE(collided.is_ok(), collided.status().to_string());
  BOOST_REQUIRE(collided->size() == 1);
  BOOST_TEST(!(*collided)[0].boolean(0));
  BOOST_TEST((*collided)[0].boolean(1 + 11));  // rotated
  BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", lost.id) == 0);
  BOOST_TEST(!grants.find_refresh_token(live)->rotated);
  // A grant bound to a DPoP key: only a proof by that key rotates it, and the event says so.
  Grant bound = grant;
  bound.id.clear();
  bound.dpop_jkt = "jkt-of-the-client-key";
  BOOST_REQUIRE(grants.create(bound).is_ok());
  auto bound_token = grants.issue_refresh_token(bound, kNow, kIdle);
  BOOST_REQUIRE(bound_token.is_ok());
  for (const char* jkt : {"", "jkt-of-another-key"}) {
    auto [id, out] = ask(*bound_token, bound, [&](RefreshRequest& r) { r.dpop_jkt = jkt; });
    BOOST_REQUIRE(out.is_ok());
    BOOST_TEST(!out->successor.has_value());
    BOOST_TEST(out->state.grant.dpop_jkt == bound.dpop_jkt);
  }
  auto [bound_id, bound_out] =
      ask(*bound_token, bound, [&](RefreshRequest& r) { r.dpop_jkt = bound.dpop_jkt; });
  BOOST_REQUIRE(bound_out.is_ok());
  BOOST_TEST(bound_out->successor.has_value());
  BOOST_TEST(event_of(bound_id).str(7) == "BOOLEAN");
  // A deactivated user, a revoked grant: refused, the state says why.
  BOOST_REQUIRE(db->execute("UPDATE users SET active = FALSE WHERE id = ?", {user_id}).is_ok());
  auto [inactive_id, inactive] =
      ask(*bound_out->successor, bound, [&](RefreshRequest& r) { r.dpop_jkt = bound.dpop_jkt; });
  BOOST_REQUIRE(inactive.is_ok());
  BOOST_TEST(!inactive->successor.has_value());
  BOOST_TEST(!inactive->state.user_active.value_or(true));
  BOOST_REQUIRE(grants.revoke(wide.id, "test", kNow).is_ok());
  BOOST_REQUIRE(db->execute("UPDATE users SET active = TRUE WHERE id = ?", {user_id}).is_ok());
  auto [revoked_id, revoked] = ask(live, wide, [](RefreshRequest&) {});
  BOOST_REQUIRE(revoked.is_ok());
  BOOST_TEST(!revoked->successor.has_value());
  BOOST_TEST(revoked->state.grant.revoked_at.has_value());
  BOOST_TEST(count("SELECT COUNT(*) FROM events WHERE id = ?", revoked_id) == 0);
  // An unknown token: NotFound.
  auto [unknown_id, unknown] = ask("no-such-token", wide, [](RefreshRequest&) {});
  BOOST_TEST(unknown.status().code() == Code::kNotFound);
}
