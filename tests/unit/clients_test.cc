#define BOOST_TEST_MODULE clients
#include "clients/clients.h"

#include <boost/test/unit_test.hpp>

#include "core/ids.h"
#include "core/time.h"
#include "db_fixture.h"
#include "store/migrate.h"

using namespace portcullis;
using namespace portcullis::oauth;

namespace {

const std::string kResource = "res_01jd3k0000000000000000000a";
const std::string kOther = "res_01jd3k0000000000000000000b";

ClientMetadata metadata(std::string method, std::string redirect = "http://localhost:3000/cb") {
  ClientMetadata m;
  m.redirect_uris = {std::move(redirect)};
  m.token_endpoint_auth_method = std::move(method);
  m.client_name = "Test client";
  return m;
}

struct Fixture {
  std::optional<config::Config> config = testing::test_config();
  std::optional<store::Db> db;
  Fixture() {
    db.emplace(config->db);
    BOOST_REQUIRE(store::migrate(*db, store::embedded_migrations()).is_ok());
    for (const char* table : {"oauth_clients", "grants", "access_tokens", "consents"}) {
      BOOST_REQUIRE(db->execute(std::string("DELETE FROM ") + table).is_ok());
    }
  }
};

void add_grant(store::Db& db, const std::string& id, const std::string& client_id,
               int64_t absolute_expires_at, bool revoked = false) {
  BOOST_REQUIRE(db.execute("INSERT INTO grants (id, user_id, client_id, resource_id, scope, "
                           "auth_time, create_time, absolute_expires_at, revoked_at) VALUES "
                           "(?, 'usr_x', ?, ?, '', 0, UTC_TIMESTAMP(6), ?, ?)",
                           {id, client_id, kResource, absolute_expires_at,
                            revoked ? store::Value(int64_t{1}) : store::Value(nullptr)})
                    .is_ok());
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(confidential_clients_get_a_secret_only_once, Fixture) {
  ClientStore store(*db);
  auto made =
      store.register_client(ClientInfo::Kind::kDcr, kResource, metadata("client_secret_basic"));
  BOOST_REQUIRE_MESSAGE(made.is_ok(), made.status().to_string());
  BOOST_TEST(is_valid_id(made->client_id, "dcr_"));
  BOOST_TEST(made->client_secret.size() == 43u);  // 256 bits, base64url
  BOOST_TEST(!made->existing);
  BOOST_TEST(made->client_id_issued_at > 0);
  Json::Value response = registration_response(*made);
  BOOST_TEST(response["client_secret"].asString() == made->client_secret);
  BOOST_TEST(response["client_secret_expires_at"].asInt() == 0);
  BOOST_TEST(response["client_name"].asString() == "Test client");

  // Only the hash is stored.
  auto stored =
      db->query("SELECT secret_hash, metadata FROM oauth_clients WHERE id = ?", {made->client_id});
  BOOST_REQUIRE(stored.is_ok());
  BOOST_TEST((*stored)[0].str(0).size() == 32u);
  BOOST_TEST((*stored)[0].str(1).find(made->client_secret) == std::string::npos);

  auto info = store.authenticate(made->client_id, made->client_secret);
  BOOST_REQUIRE(info.is_ok());
  BOOST_TEST(info->client_name == "Test client");
  BOOST_TEST(info->resource_id == kResource);
  BOOST_TEST(!info->is_public());
  BOOST_TEST(info->allows_grant("refresh_token"));
  for (const auto& [id, secret] : std::vector<std::pair<std::string, std::string>>{
           {made->client_id, made->client_secret + "x"},
           {made->client_id, ""},
           {"dcr_01jd3k0000000000000000000z", made->client_secret},
           {"https://client.example/meta.json", made->client_secret},
           {"", ""}}) {
    auto failed = store.authenticate(id, secret);
    BOOST_TEST(failed.status().code() == Code::kUnauthenticated);
    BOOST_TEST(failed.status().reason() == "invalid_client");
  }
  // Two confidential registrations with the same metadata are two clients.
  auto twin =
      store.register_client(ClientInfo::Kind::kDcr, kResource, metadata("client_secret_basic"));
  BOOST_REQUIRE(twin.is_ok());
  BOOST_TEST(twin->client_id != made->client_id);
}

BOOST_FIXTURE_TEST_CASE(public_dcr_clients_are_deduplicated_per_resource, Fixture) {
  ClientStore store(*db);
  auto first = store.register_client(ClientInfo::Kind::kDcr, kResource, metadata("none"));
  BOOST_REQUIRE(first.is_ok());
  BOOST_TEST(first->client_secret.empty());
  BOOST_TEST(!registration_response(*first).isMember("client_secret"));
  BOOST_TEST(!registration_response(*first).isMember("client_secret_expires_at"));
  auto again = store.register_client(ClientInfo::Kind::kDcr, kResource, metadata("none"));
  BOOST_REQUIRE(again.is_ok());
  BOOST_TEST(again->client_id == first->client_id);
  BOOST_TEST(again->existing);
  BOOST_TEST(again->client_id_issued_at == first->client_id_issued_at);
  // The hit counts as a use: a client that keeps registering is not pruned.
  auto touched =
      db->query("SELECT last_used_time FROM oauth_clients WHERE id = ?", {first->client_id});
  BOOST_TEST(!(*touched)[0].is_null(0));
  // Other metadata, another resource, or pre-registration: a new client each time.
  BOOST_TEST(store
                 .register_client(ClientInfo::Kind::kDcr, kResource,
                                  metadata("none", "http://localhost:4000/cb"))
                 ->client_id != first->client_id);
  BOOST_TEST(store.register_client(ClientInfo::Kind::kDcr, kOther, metadata("none"))->client_id !=
             first->client_id);
  auto pre = store.register_client(ClientInfo::Kind::kPreregistered, kResource, metadata("none"));
  BOOST_REQUIRE(pre.is_ok());
  BOOST_TEST(is_valid_id(pre->client_id, "cli_"));
  BOOST_TEST(store.register_client(ClientInfo::Kind::kPreregistered, kResource, metadata("none"))
                 ->client_id != pre->client_id);
  // A public client cannot authenticate with a secret.
  BOOST_TEST(store.authenticate(first->client_id, "").status().reason() == "invalid_client");
}

BOOST_FIXTURE_TEST_CASE(get_touch_list_and_remove, Fixture) {
  ClientStore store(*db);
  auto a = store.register_client(ClientInfo::Kind::kDcr, kResource, metadata("none"));
  auto b = store.register_client(ClientInfo::Kind::kPreregistered, kResource,
                                 metadata("client_secret_post"));
  auto c = store.register_client(ClientInfo::Kind::kDcr, kOther, metadata("none"));
  BOOST_REQUIRE(a.is_ok() && b.is_ok() && c.is_ok());

  auto info = store.get(b->client_id);
  BOOST_REQUIRE(info.is_ok());
  BOOST_TEST((info->kind == ClientInfo::Kind::kPreregistered));
  BOOST_TEST(info->token_endpoint_auth_method == "client_secret_post");
  BOOST_TEST(info->redirect_uris.size() == 1u);
  BOOST_TEST(store.get("dcr_01jd3k0000000000000000000z").status().code() == Code::kNotFound);
  BOOST_TEST(store.get("https://client.example/meta.json").status().code() == Code::kNotFound);
  BOOST_TEST(store.get("api_01jd3k0000000000000000000z").status().code() == Code::kNotFound);

  BOOST_TEST(store.touch(a->client_id).is_ok());
  auto used = db->query("SELECT last_used_time FROM oauth_clients WHERE id = ?", {a->client_id});
  BOOST_TEST(!(*used)[0].is_null(0));

  paging::TokenCodec codec(std::string(32, 'k'), ClientStore::listing(kResource));
  paging::PageRequest request;
  request.page_size = 1;
  auto page = store.list(kResource, request, codec);
  BOOST_REQUIRE(page.is_ok());
  BOOST_TEST(page->total_size == 2);
  BOOST_REQUIRE(page->items.size() == 1u);
  BOOST_TEST(page->items[0].client_id == a->client_id);
  BOOST_TEST(!page->items[0].last_used_time.empty());
  BOOST_TEST(page->items[0].client_secret.empty());
  request.token = codec.decode(page->next_page_token).value();
  auto second = store.list(kResource, request, codec);
  BOOST_REQUIRE(second.is_ok());
  BOOST_TEST(second->items[0].client_id == b->client_id);
  BOOST_TEST(second->next_page_token == "");

  // Removing needs the right resource; it revokes the client's grants and tokens.
  int64_t now = unix_now();
  add_grant(*db, "grt_b", b->client_id, now + 3600);
  BOOST_REQUIRE(db->execute("INSERT INTO access_tokens (jti, grant_id, expires_at) VALUES "
                            "('jti_b', 'grt_b', ?)",
                            {now + 600})
                    .is_ok());
  BOOST_TEST(store.remove(kOther, b->client_id).code() == Code::kNotFound);
  BOOST_TEST(store.remove(kResource, b->client_id).is_ok());
  BOOST_TEST(store.get(b->client_id).status().code() == Code::kNotFound);
  BOOST_TEST(!(*db->query("SELECT revoked_at FROM grants WHERE id = 'grt_b'"))[0].is_null(0));
  BOOST_TEST(
      !(*db->query("SELECT revoked_at FROM access_tokens WHERE jti = 'jti_b'"))[0].is_null(0));
  BOOST_TEST(store.remove(kResource, b->client_id).code() == Code::kNotFound);
}

BOOST_FIXTURE_TEST_CASE(prune_removes_only_unused_dcr_clients_without_live_grants, Fixture) {
  ClientStore store(*db);
  auto make = [&](ClientInfo::Kind kind, const std::string& resource, const std::string& uri) {
    auto r = store.register_client(kind, resource, metadata("client_secret_basic", uri));
    BOOST_REQUIRE(r.is_ok());
    return r->client_id;
  };
  std::string unused = make(ClientInfo::Kind::kDcr, kResource, "https://a.test/1");
  std::string live = make(ClientInfo::Kind::kDcr, kResource, "https://a.test/2");
  std::string dead_grant = make(ClientInfo::Kind::kDcr, kResource, "https://a.test/3");
  std::string expired_grant = make(ClientInfo::Kind::kDcr, kResource, "https://a.test/4");
  std::string pre = make(ClientInfo::Kind::kPreregistered, kResource, "https://a.test/5");
  std::string elsewhere = make(ClientInfo::Kind::kDcr, kOther, "https://a.test/6");
  const int64_t later = unix_now() + 40 * 86400;
  add_grant(*db, "grt_live", live, later + 3600);
  add_grant(*db, "grt_dead", dead_grant, later + 3600, /*revoked=*/true);
  add_grant(*db, "grt_expired", expired_grant, later - 1);

  // Nothing is old enough yet.
  BOOST_TEST(store.prune(unix_now(), 30 * 86400).value() == 0u);
  // Forty days on, limited to the other resource first.
  BOOST_TEST(store.prune(later, 30 * 86400, kOther).value() == 1u);
  BOOST_TEST(store.get(elsewhere).status().code() == Code::kNotFound);
  BOOST_TEST(store.get(unused).is_ok());
  BOOST_TEST(store.prune(later, 30 * 86400).value() == 3u);
  BOOST_TEST(store.get(unused).status().code() == Code::kNotFound);
  BOOST_TEST(store.get(dead_grant).status().code() == Code::kNotFound);
  BOOST_TEST(store.get(expired_grant).status().code() == Code::kNotFound);
  BOOST_TEST(store.get(live).is_ok());
  BOOST_TEST(store.get(pre).is_ok());

  // A client used recently is kept even without a grant.
  std::string recent = make(ClientInfo::Kind::kDcr, kResource, "https://a.test/7");
  BOOST_REQUIRE(db->execute("UPDATE oauth_clients SET create_time = '2020-01-01', "
                            "last_used_time = UTC_TIMESTAMP(6) WHERE id = ?",
                            {recent})
                    .is_ok());
  BOOST_TEST(store.prune(unix_now(), 3600).value() == 0u);
  BOOST_TEST(store.get(recent).is_ok());
}

BOOST_FIXTURE_TEST_CASE(find_with_code_state_reads_the_client_and_what_the_code_names_in_one_row,
                        Fixture) {
  ClientStore store(*db);
  auto client =
      store.register_client(ClientInfo::Kind::kDcr, kResource, metadata("client_secret_post"));
  BOOST_REQUIRE(client.is_ok());
  SealedCode code;
  code.grant_id = new_id("grt_");
  code.resource_id = kOther;                        // no such resource
  code.user_id = "usr_01jd3k00000000000000000000";  // no such user

  auto found = store.find_with_code_state(client->client_id, &code);
  BOOST_REQUIRE_MESSAGE(found.is_ok(), found.status().to_string());
  BOOST_TEST(found->client.info.client_id == client->client_id);
  BOOST_TEST(secret_matches(&found->client, client->client_secret));
  BOOST_REQUIRE(found->code.has_value());
  BOOST_TEST(!found->code->used);
  BOOST_TEST(!found->code->user_active.has_value());
  BOOST_TEST(!found->code->resource.has_value());
  // Once the code's grant exists, the code was used.
  add_grant(*db, code.grant_id, client->client_id, unix_now() + 3600);
  BOOST_TEST(store.find_with_code_state(client->client_id, &code)->code->used);

  // Without a code: the client alone.
  auto alone = store.find_with_code_state(client->client_id, nullptr);
  BOOST_REQUIRE(alone.is_ok());
  BOOST_TEST(alone->client.info.client_id == client->client_id);
  BOOST_TEST(!alone->code.has_value());
  // An unknown client: NotFound, whatever the code.
  BOOST_TEST(store.find_with_code_state("dcr_00000000000000000000000000", &code).status().code() ==
             Code::kNotFound);
  BOOST_TEST(store.find_with_code_state("not-a-client", &code).status().code() == Code::kNotFound);
  BOOST_TEST(store.find_with_code_state("not-a-client", nullptr).status().code() ==
             Code::kNotFound);
}
