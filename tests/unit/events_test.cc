// The event-type registry, the events API's filters, the outbox written with the events,
// retention, Standard Webhooks signatures and the delivery's SSRF guard in production mode.
#define BOOST_TEST_MODULE events
#include <boost/test/unit_test.hpp>
#include <memory>
#include <set>

#include "core/ids.h"
#include "core/time.h"
#include "crypto/base64.h"
#include "crypto/random.h"
#include "db_fixture.h"
#include "events/event_store.h"
#include "events/recorder.h"
#include "events/types.h"
#include "http/request.h"
#include "outbound/address.h"
#include "paging/counter.h"
#include "store/migrate.h"
#include "store/migrations.h"
#include "tokens/grants.h"
#include "webhooks/delivery.h"
#include "webhooks/signing.h"
#include "webhooks/webhook_store.h"

using namespace portcullis;

namespace {

std::unique_ptr<store::Db> migrated_db() {
  auto config = testing::test_config();
  if (!config) return nullptr;
  auto db = std::make_unique<store::Db>(config->db);
  BOOST_REQUIRE(store::migrate(*db, store::embedded_migrations()).is_ok());
  return db;
}

http::Form query(std::string text) {
  auto f = http::parse_urlencoded(text);
  BOOST_REQUIRE(f.is_ok());
  return *f;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_contract_type_is_declared_once) {
  std::set<std::string_view> names;
  for (const events::EventType* t : events::all_types()) {
    BOOST_TEST(names.insert(t->name).second, "declared twice: " << t->name);
    BOOST_TEST(t->name.find('.') != std::string_view::npos);
    BOOST_TEST(!t->summary.empty());
  }
  // Contract §11's list.
  for (const char* name : {"user.login.succeeded",    "user.login.failed",
                           "consent.granted",         "consent.denied",
                           "client.registered",       "token.issued",
                           "token.refreshed",         "token.refresh_reuse_detected",
                           "token.revoked",           "token.validated",
                           "token.validation_failed", "scim.user.created",
                           "scim.user.updated",       "scim.user.deactivated",
                           "scim.user.deleted",       "scim.group.created",
                           "scim.group.updated",      "scim.group.deleted",
                           "organization.created",    "domain.verified",
                           "connection.created",      "webhook.disabled"}) {
    BOOST_TEST(events::find_type(name) != nullptr, name);
  }
  BOOST_TEST(events::find_type("token.nope") == nullptr);
  BOOST_TEST(events::type::kTokenValidated.declares("scopes_granted"));
  BOOST_TEST(events::type::kTokenValidated.declares("count"));
  BOOST_TEST(!events::type::kTokenValidated.declares("scope"));
  BOOST_TEST(!events::type::kTokenValidated.declares("count "));
}

BOOST_AUTO_TEST_CASE(event_of_a_type_carries_its_name_and_subjects) {
  events::Event e = events::Event::of(events::type::kConsentGranted,
                                      {.user_id = "usr_1", .resource_id = "res_1"});
  BOOST_TEST(e.type == "consent.granted");
  BOOST_TEST(e.user_id == "usr_1");
  BOOST_TEST(e.resource_id == "res_1");
  BOOST_TEST(e.client_id.empty());
}

BOOST_AUTO_TEST_CASE(rfc3339_times_become_utc_datetimes) {
  auto t = events::rfc3339_to_db_time("2026-11-21T10:00:00Z");
  BOOST_REQUIRE(t.is_ok());
  BOOST_TEST(*t == "2026-11-21 10:00:00.000000");
  BOOST_TEST(*events::rfc3339_to_db_time("2026-11-21T10:00:00.5+01:00") ==
             "2026-11-21 09:00:00.500000");
  BOOST_TEST(*events::rfc3339_to_db_time("2024-02-29t23:30:00.123456789-01:00") ==
             "2024-03-01 00:30:00.123456");
  for (const char* bad :
       {"", "2026-11-21", "2026-11-21 10:00:00Z", "2026-11-21T10:00:00", "2026-13-01T00:00:00Z",
        "2026-02-29T00:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21T10:00:00.Z",
        "2026-11-21T10:00:00+0100", "2026-11-21T10:00:00Zjunk", "1969-12-31T23:59:59Z",
        "2026-11-21T10:00:00+24:00", "yesterday"}) {
    BOOST_TEST(!events::rfc3339_to_db_time(bad).is_ok(), bad);
  }
}

BOOST_AUTO_TEST_CASE(event_filters_are_checked) {
  auto f = events::parse_event_filter(
      query("types=token.issued,consent.granted,token.issued&user_id=usr_" + std::string(26, '0') +
            "&start_time=2026-01-01T00:00:00Z"));
  BOOST_REQUIRE(f.is_ok());
  BOOST_TEST(f->types.size() == 2u);
  BOOST_TEST(f->start_time == "2026-01-01 00:00:00.000000");
  for (const char* bad :
       {"types=token.nope", "types=token.issued,", "user_id=usr_x",
        "resource_id=org_"
        "00000000000000000000000000",
        "organization_id=x", "start_time=today", "end_time=2026-01-01",
        "start_time=2026-01-02T00:00:00Z&end_time=2026-01-01T00:00:00Z",
        "user_id=usr_00000000000000000000000000&user_id=usr_00000000000000000000000001"}) {
    BOOST_TEST(!events::parse_event_filter(query(bad)).is_ok(), bad);
  }
  // Two filters never share page tokens.
  BOOST_TEST(events::event_listing(*f).filter !=
             events::event_listing(events::EventFilter{}).filter);
}

// Standard Webhooks' published test vector (standard-webhooks/libraries, the reference tests).
BOOST_AUTO_TEST_CASE(signatures_follow_standard_webhooks) {
  auto key = webhooks::secret_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  BOOST_REQUIRE(key.is_ok());
  BOOST_TEST(
      webhooks::sign(*key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, R"({"test": 2432232314})") ==
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  std::string secret = webhooks::new_secret();
  BOOST_TEST(secret.rfind("whsec_", 0) == 0u);
  BOOST_TEST(webhooks::secret_key(secret).is_ok());
  BOOST_TEST(!webhooks::secret_key("sk_abc").is_ok());
  auto other = webhooks::secret_key(webhooks::new_secret());
  std::string both = webhooks::signature_header({*key, *other}, "msg_1", 1, "{}");
  BOOST_TEST(both.find(' ') != std::string::npos);
  BOOST_TEST(both.rfind(webhooks::sign(*key, "msg_1", 1, "{}"), 0) == 0u);
}

BOOST_AUTO_TEST_CASE(retry_schedule_has_jitter_and_an_end) {
  std::vector<int64_t> schedule = {5, 60};
  for (int i = 0; i < 50; ++i) {
    int64_t first = webhooks::retry_delay_ms(schedule, 1);
    BOOST_TEST(first >= 4000);
    BOOST_TEST(first <= 6000);
    int64_t second = webhooks::retry_delay_ms(schedule, 2);
    BOOST_TEST(second >= 48000);
    BOOST_TEST(second <= 72000);
  }
  BOOST_TEST(webhooks::retry_delay_ms(schedule, 3) == -1);
}

// Production mode: whatever a host name resolves to, a special-use address is refused before
// any connection, and plain http is refused outright.
BOOST_AUTO_TEST_CASE(deliveries_refuse_private_and_metadata_addresses) {
  config::Config config;
  config.mode = "production";
  config.webhooks.timeout_ms = 1000;
  for (const char* address : {"127.0.0.1", "169.254.169.254", "10.1.2.3", "192.168.0.1", "::1"}) {
    outbound::Options options = webhooks::delivery_options(config);
    options.resolver = [&](const std::string&,
                           std::chrono::milliseconds) -> Result<std::vector<outbound::IpAddress>> {
      return std::vector<outbound::IpAddress>{*outbound::parse_ip(address)};
    };
    outbound::Session session;
    webhooks::Attempt a = webhooks::post_message(session, "https://hooks.example.com/in", "msg_1",
                                                 "{}", {"key"}, 1, options);
    BOOST_TEST(a.status == 0);
    BOOST_TEST(a.error == "the host has no public address", address << ": " << a.error);
  }
  outbound::Options options = webhooks::delivery_options(config);
  outbound::Session session;
  webhooks::Attempt a =
      webhooks::post_message(session, "http://127.0.0.1:9/in", "msg_1", "{}", {"key"}, 1, options);
  BOOST_TEST(a.status == 0);
  BOOST_TEST(!a.error.empty());
  // The API refuses the same URLs up front.
  BOOST_TEST(!webhooks::check_url("http://127.0.0.1:9/in", false).is_ok());
  BOOST_TEST(!webhooks::check_url("https://169.254.169.254/latest", false).is_ok());
  BOOST_TEST(!webhooks::check_url("https://10.0.0.1/in", false).is_ok());
  BOOST_TEST(webhooks::check_url("https://hooks.example.com/in", false).is_ok());
  BOOST_TEST(webhooks::check_url("http://127.0.0.1:9/in", true).is_ok());
  BOOST_TEST(!webhooks::check_url("http://example.com/in", true).is_ok());
  BOOST_TEST(!webhooks::check_url("ftp://example.com/in", true).is_ok());
}

BOOST_AUTO_TEST_CASE(events_and_their_deliveries_are_written_together) {
  auto db = migrated_db();
  if (!db) return;
  auto key = crypto::MasterKey::from_base64(crypto::base64_encode(crypto::random_bytes(32)));
  BOOST_REQUIRE(key.is_ok());
  webhooks::WebhookStore hooks(*db, *key);
  webhooks::WebhookFields all{.url = "https://hooks.example.com/all"};
  webhooks::WebhookFields issued{.url = "https://hooks.example.com/issued",
                                 .event_types = std::vector<std::string>{"token.issued"}};
  webhooks::WebhookFields off{.url = "https://hooks.example.com/off", .enabled = false};
  auto a = hooks.create(all), b = hooks.create(issued), c = hooks.create(off);
  BOOST_REQUIRE(a.is_ok());
  BOOST_REQUIRE(b.is_ok());
  BOOST_REQUIRE(c.is_ok());
  events::Recorder recorder;
  std::string user = new_id("usr_");
  recorder.add(events::Event::of(events::type::kTokenIssued, {.user_id = user}));
  recorder.add(events::Event::of(events::type::kConsentGranted, {.user_id = user}));
  BOOST_REQUIRE(recorder.flush(*db).is_ok());
  auto count = [&](const std::string& webhook) {
    auto rows = db->query(
        "SELECT COUNT(*) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id "
        "WHERE d.webhook_id = ? AND e.user_id = ? AND d.state = 'pending'",
        {webhook, user});
    BOOST_REQUIRE(rows.is_ok());
    return (*rows)[0].i64(0);
  };
  BOOST_TEST(count(a->webhook.id) == 2);
  BOOST_TEST(count(b->webhook.id) == 1);
  BOOST_TEST(count(c->webhook.id) == 0);
  // The secret opens again for signing; a rotation adds the new one in front.
  auto sealed = db->query("SELECT secret_sealed FROM webhooks WHERE id = ?", {a->webhook.id});
  BOOST_REQUIRE(sealed.is_ok());
  auto keys = hooks.signing_keys(a->webhook.id, (*sealed)[0].str(0), "", false);
  BOOST_REQUIRE(keys.is_ok());
  BOOST_TEST((*keys)[0] == *webhooks::secret_key(a->secret));
  // A replay of everything since an hour ago re-queues the endpoint's deliveries and creates
  // the disabled endpoint's.
  std::string hour_ago = db_now();
  hour_ago = std::to_string(std::stoi(hour_ago.substr(0, 4)) - 1) + hour_ago.substr(4);
  auto replayed = hooks.replay_since(c->webhook.id, hour_ago);
  BOOST_REQUIRE(replayed.is_ok());
  BOOST_TEST(count(c->webhook.id) == 2);
  for (const auto& w : {a->webhook.id, b->webhook.id, c->webhook.id}) {
    BOOST_TEST(hooks.remove(w).is_ok());
  }
}

// The hot path's outbox (sql/0090_event_outbox.sql): a refresh token and its token.refreshed
// event are one CALL, written together or, on the duplicate parent that signals reuse, not at
// all (and the duplicate still reaches the caller as AlreadyExists). The event waits marked in
// event_outbox, counted in total_size already, until a fan-out queues its deliveries and moves
// it to its type's count.
BOOST_AUTO_TEST_CASE(a_refresh_token_and_its_event_are_written_together_and_fanned_out_after) {
  auto db = migrated_db();
  if (!db) return;
  auto key = crypto::MasterKey::from_base64(crypto::base64_encode(crypto::random_bytes(32)));
  BOOST_REQUIRE(key.is_ok());
  webhooks::WebhookStore hooks(*db, *key);
  auto hook = hooks.create(
      webhooks::WebhookFields{.url = "https://hooks.example.com/refreshed",
                              .event_types = std::vector<std::string>{"token.refreshed"}});
  BOOST_REQUIRE(hook.is_ok());
  // Whatever other fan-outs happen meanwhile, this stays exact: counted + marked.
  auto total = [&] {
    auto n = events::count_of_types(*db, {"token.refreshed"});
    BOOST_REQUIRE(n.is_ok());
    return *n;
  };
  const int64_t before = total();
  oauth::Grant grant;
  grant.user_id = new_id("usr_");
  grant.client_id = "dcr_01jd3k0000000000000000000a";
  grant.resource_id = new_id("res_");
  grant.absolute_expires_at = unix_now() + 3600;
  // The rotation refreshes only an active user's grant.
  BOOST_REQUIRE(db->execute("INSERT INTO users (id, email, metadata, create_time, update_time) "
                            "VALUES (?, ?, '{}', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
                            {grant.user_id, grant.user_id + "@example.com"})
                    .is_ok());
  oauth::GrantStore grants(*db);
  BOOST_REQUIRE(grants.create(grant).is_ok());
  const crypto::MasterKey& master_key = *key;
  auto first = grants.issue_refresh_token(master_key, grant, unix_now(), 600);
  BOOST_REQUIRE(first.is_ok());
  auto presented = grants.find_refresh_token(master_key, *first);
  BOOST_REQUIRE_MESSAGE(presented.is_ok(), presented.status().to_string());
  auto refreshed = [&] {
    events::Event e = events::Event::of(events::type::kTokenRefreshed, {.user_id = grant.user_id});
    e.data["grant_id"] = grant.id;
    events::Recorder::stamp(e);
    return e;
  };
  const events::Event won = refreshed();
  auto second = grants.rotate_refresh_token(master_key, *presented, *first, unix_now(), 600, &won);
  BOOST_REQUIRE_MESSAGE(second.is_ok(), second.status().to_string());
  // The same token presented again: the rotation loses, and its event is not written either.
  const events::Event lost = refreshed();
  auto again = grants.rotate_refresh_token(master_key, *presented, *first, unix_now(), 600, &lost);
  BOOST_TEST(again.status().code() == Code::kAlreadyExists);
  auto rows = [&](const std::string& sql, const std::string& id) {
    auto r = db->query(sql, {id});
    BOOST_REQUIRE(r.is_ok());
    return (*r)[0].i64(0);
  };
  BOOST_TEST(rows("SELECT refresh_generation FROM grants WHERE id = ?", grant.id) == 1);
  BOOST_TEST(rows("SELECT COUNT(*) FROM events WHERE id = ?", won.id) == 1);
  BOOST_TEST(rows("SELECT COUNT(*) FROM events WHERE id = ?", lost.id) == 0);
  BOOST_TEST(rows("SELECT COUNT(*) FROM event_outbox WHERE event_id = ?", lost.id) == 0);
  BOOST_TEST(total() == before + 1);
  // Inside a caller's transaction the CALL joins it: rolled back with it.
  const events::Event undone = refreshed();
  Status st = db->transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(events::EventStore(*db).record(undone));
    return Status::failed_precondition("roll back");
  });
  BOOST_TEST(st.code() == Code::kFailedPrecondition);
  BOOST_TEST(rows("SELECT COUNT(*) FROM events WHERE id = ?", undone.id) == 0);
  // The fan-out (the delivery process's, or another test's) queues the delivery and moves the
  // event from its mark to its type's count.
  for (int i = 0; i < 100 && rows("SELECT COUNT(*) FROM event_outbox WHERE event_id = ?", won.id);
       ++i) {
    BOOST_REQUIRE(events::EventStore(*db).fan_out(500).is_ok());
  }
  BOOST_TEST(rows("SELECT COUNT(*) FROM event_outbox WHERE event_id = ?", won.id) == 0);
  BOOST_TEST(rows("SELECT COUNT(*) FROM webhook_deliveries WHERE event_id = ?", won.id) == 1);
  BOOST_TEST(total() == before + 1);
  BOOST_TEST(hooks.remove(hook->webhook.id).is_ok());
}

// A worker keeps its prepared statements: event batches of every size a load can give (1 to
// kRowsPerInsert rows) share a few statements, or each size a busier minute brings would keep
// one more in every worker (the memory steps issue 17's soak saw).
BOOST_AUTO_TEST_CASE(event_batches_of_every_size_share_a_few_prepared_statements) {
  auto db = migrated_db();
  if (!db) return;
  const std::string user = new_id("usr_");
  events::Recorder recorder;
  recorder.add(events::Event::of(events::type::kUserUpdated, {.user_id = user}));
  BOOST_REQUIRE(recorder.flush(*db).is_ok());
  const size_t before = db->prepared_statements();
  int64_t written = 1;
  for (size_t n = 1; n <= events::Recorder::kRowsPerInsert; ++n) {
    for (size_t i = 0; i < n; ++i) {
      recorder.add(events::Event::of(events::type::kUserUpdated, {.user_id = user}));
    }
    BOOST_REQUIRE(recorder.flush(*db).is_ok());
    written += static_cast<int64_t>(n);
  }
  // 6 more INSERT shapes (2 … 64 rows) and 7 more outbox IN lists (2 … 128 ids): not 200.
  BOOST_TEST(db->prepared_statements() - before <= 13u);
  auto rows = db->query("SELECT COUNT(*) FROM events WHERE user_id = ?", {user});
  BOOST_REQUIRE(rows.is_ok());
  BOOST_TEST((*rows)[0].i64(0) == written);
}

BOOST_AUTO_TEST_CASE(prune_deletes_only_older_events_in_batches) {
  auto db = migrated_db();
  if (!db) return;
  std::string user = new_id("usr_");
  auto counted = [&] {
    auto n = events::count_of_types(*db, {"user.created"});
    BOOST_REQUIRE(n.is_ok());
    return *n;
  };
  const int64_t before = counted();
  for (int i = 0; i < 5; ++i) {
    // As the Recorder writes them (an old occurred_at it would not give): row and count.
    std::string id = new_id("evt_");
    BOOST_REQUIRE(db->execute("INSERT INTO events (id, type, occurred_at, user_id, data) VALUES "
                              "(?, 'user.created', '2001-01-01 00:00:00', ?, '{}')",
                              {id, user})
                      .is_ok());
    BOOST_REQUIRE(paging::add_to_count(*db, events::count_scope("user.created"), id, 1).is_ok());
  }
  BOOST_TEST(counted() == before + 5);
  events::Recorder recorder;
  recorder.add(events::Event::of(events::type::kUserCreated, {.user_id = user}));
  BOOST_REQUIRE(recorder.flush(*db).is_ok());
  auto pruned = events::EventStore(*db).prune_before("2002-01-01 00:00:00", 2);
  BOOST_REQUIRE(pruned.is_ok());
  BOOST_TEST(*pruned >= 5);
  auto left = db->query("SELECT COUNT(*) FROM events WHERE user_id = ?", {user});
  BOOST_REQUIRE(left.is_ok());
  BOOST_TEST((*left)[0].i64(0) == 1);
  // The type's count followed: +1 written by the Recorder, -5 pruned.
  BOOST_TEST(counted() == before + 1);
}

// An endpoint that has failed for longer than disable_after_seconds is disabled on its next
// failure, with a webhook.disabled event; its attempt is recorded.
BOOST_AUTO_TEST_CASE(an_endpoint_failing_for_a_day_is_disabled) {
  auto db = migrated_db();
  if (!db) return;
  auto key = crypto::MasterKey::from_base64(crypto::base64_encode(crypto::random_bytes(32)));
  BOOST_REQUIRE(key.is_ok());
  config::Config config;
  config.mode = "local";
  config.webhooks.timeout_ms = 2000;
  webhooks::WebhookStore hooks(*db, *key);
  // Port 9 (discard) on loopback: nothing listens, every attempt fails at once.
  auto hook = hooks.create(
      {.url = "http://127.0.0.1:9/in", .event_types = std::vector<std::string>{"user.deleted"}});
  BOOST_REQUIRE(hook.is_ok());
  const std::string id = hook->webhook.id;
  BOOST_REQUIRE(db->execute("UPDATE webhooks SET failing_since = UTC_TIMESTAMP(6) - INTERVAL 25 "
                            "HOUR WHERE id = ?",
                            {id})
                    .is_ok());
  events::Recorder recorder;
  recorder.add(events::Event::of(events::type::kUserDeleted, {.user_id = new_id("usr_")}));
  BOOST_REQUIRE(recorder.flush(*db).is_ok());
  webhooks::Deliverer deliverer(*db, *key, config, webhooks::delivery_options(config));
  events::Recorder disabled;
  for (int round = 0; round < 5 && disabled.empty(); ++round) {
    BOOST_REQUIRE(deliverer.run_once(disabled).is_ok());
  }
  auto w = hooks.get(id);
  BOOST_REQUIRE(w.is_ok());
  BOOST_TEST(!w->enabled);
  BOOST_TEST(w->disabled_reason == "failing");
  BOOST_REQUIRE(disabled.size() == 1u);
  auto attempts = db->query(
      "SELECT COUNT(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id "
      "WHERE d.webhook_id = ? AND a.status_code IS NULL AND a.error IS NOT NULL",
      {id});
  BOOST_REQUIRE(attempts.is_ok());
  BOOST_TEST((*attempts)[0].i64(0) >= 1);
  BOOST_TEST(hooks.remove(id).is_ok());
}
