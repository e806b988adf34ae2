#define BOOST_TEST_MODULE resources
#include "clients/resources.h"

#include <boost/test/unit_test.hpp>

#include "clients/resource_cache.h"
#include "core/ids.h"
#include "db_fixture.h"
#include "store/migrate.h"

using namespace portcullis;
using namespace portcullis::oauth;

namespace {

Resource with_url(std::string url) {
  Resource r;
  r.server_url = std::move(url);
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(server_urls_are_https_or_loopback_http) {
  for (const char* ok : {"https://mcp.example.com/mcp", "https://mcp.example.com",
                         "https://MCP.Example.com:8443/a/b/", "http://127.0.0.1:8081/mcp",
                         "http://localhost/mcp", "http://[::1]:9000/", "HTTPS://mcp.example.com"}) {
    BOOST_TEST(validate_server_url(ok).is_ok(), ok);
  }
  for (const char* bad :
       {"", "mcp.example.com/mcp", "/mcp", "http://mcp.example.com/mcp", "http://10.0.0.1/mcp",
        "ftp://mcp.example.com/", "https://mcp.example.com/mcp#x", "https://mcp.example.com/#",
        "https://u:p@mcp.example.com/mcp", "https://mcp.example.com/mcp?x=1", "https:///mcp",
        "https://mcp.example.com/a b", "https://mcp.exa\\mple.com/", "https://m\xc3\xa9.example/",
        "https://mcp.example.com:99999/", "https://mcp!.example.com/"}) {
    auto st = validate_server_url(bad);
    BOOST_TEST(st.code() == Code::kInvalidArgument, bad);
  }
  BOOST_TEST(!validate_server_url("https://x.example/" + std::string(2100, 'a')).is_ok());
}

BOOST_AUTO_TEST_CASE(resource_indicators_match_per_rfc_8707_and_the_contract) {
  Resource r = with_url("https://mcp.example.com/mcp");
  for (const char* same : {"https://mcp.example.com/mcp", "HTTPS://MCP.EXAMPLE.COM/mcp",
                           "https://mcp.example.com/mcp/", "hTTps://Mcp.Example.Com/mcp/"}) {
    BOOST_TEST(resource_indicator_matches(r, same), same);
  }
  for (const char* other :
       {"https://mcp.example.com/MCP", "https://mcp.example.com/mcp//", "https://mcp.example.com",
        "https://mcp.example.com/mcp#frag", "https://mcp.example.com/mcp?x=1",
        "http://mcp.example.com/mcp", "https://mcp.example.com:443/mcp", "/mcp", "mcp",
        "https://evil.example/mcp", "https://mcp.example.com.evil.example/mcp",
        "https://user@mcp.example.com/mcp", ""}) {
    BOOST_TEST(!resource_indicator_matches(r, other), other);
  }
  // A root URL: "https://h" and "https://h/" are one resource.
  BOOST_TEST(resource_indicator_matches(with_url("https://h.example"), "https://h.example/"));
  BOOST_TEST(resource_indicator_matches(with_url("https://h.example/"), "https://h.example"));
  BOOST_TEST(canonical_server_url("HTTPS://MCP.example.com:8443/A/").value_or("") ==
             "https://mcp.example.com:8443/A");
}

BOOST_AUTO_TEST_CASE(scope_names_follow_a_narrow_token_grammar) {
  for (const char* ok : {"todo:read", "demo:write", "openid", "a", "mcp.tools/call", "x_y-z.1"}) {
    BOOST_TEST(is_valid_scope_name(ok), ok);
  }
  for (const char* bad :
       {"", ":read", "-x", "todo read", "todo\"", "todo\\", "caf\xc3\xa9", "a,b", "a*"}) {
    BOOST_TEST(!is_valid_scope_name(bad), bad);
  }
  BOOST_TEST(!is_valid_scope_name(std::string(129, 'a')));
}

BOOST_AUTO_TEST_CASE(lifetimes_outside_the_recommended_range_warn) {
  Resource r;
  r.access_token_ttl_seconds = 900;
  BOOST_TEST(resource_warnings(r).empty());
  r.access_token_ttl_seconds = 300;
  BOOST_TEST(resource_warnings(r).empty());
  r.access_token_ttl_seconds = 3600;
  BOOST_TEST(resource_warnings(r).empty());
  r.access_token_ttl_seconds = 299;
  BOOST_TEST(resource_warnings(r).size() == 1u);
  r.access_token_ttl_seconds = 3601;
  BOOST_TEST(resource_warnings(r).size() == 1u);
}

BOOST_AUTO_TEST_CASE(issuer_is_the_base_url_and_the_id) {
  config::Config c;
  c.base_url = "https://auth.example.com";
  Resource r;
  r.id = "res_01jd3k0000000000000000000a";
  BOOST_TEST(r.issuer(c) == "https://auth.example.com/resources/res_01jd3k0000000000000000000a");
}

// ------------------------------------------------------------------------ against MariaDB

namespace {

ResourceFields fields(std::string name, std::string url) {
  ResourceFields f;
  f.name = std::move(name);
  f.server_url = std::move(url);
  return f;
}

}  // namespace

BOOST_AUTO_TEST_CASE(store_create_get_update_remove) {
  auto config = testing::test_config();
  store::Db db(config->db);
  BOOST_REQUIRE(store::migrate(db, store::embedded_migrations()).is_ok());
  BOOST_REQUIRE(db.execute("DELETE FROM resources").is_ok());
  ResourceStore store(db, 7200);

  ResourceFields f = fields("Todo", "https://todo.example.com/mcp");
  f.scopes = std::vector<ScopeDef>{{"todo:read", "Read your todos"}, {"todo:write", ""}};
  auto created = store.create(f);
  BOOST_REQUIRE_MESSAGE(created.is_ok(), created.status().to_string());
  BOOST_TEST(is_valid_id(created->id, "res_"));
  BOOST_TEST(created->dcr_enabled);
  BOOST_TEST(created->cimd_enabled);
  BOOST_TEST(created->access_token_ttl_seconds == 900);
  BOOST_TEST(created->create_time == created->update_time);

  auto got = store.get(created->id);
  BOOST_REQUIRE(got.is_ok());
  BOOST_TEST(got->name == "Todo");
  BOOST_TEST(got->server_url == "https://todo.example.com/mcp");
  BOOST_REQUIRE(got->scopes.size() == 2u);
  BOOST_TEST(got->scopes[0].description == "Read your todos");
  BOOST_TEST(got->find_scope("todo:write") != nullptr);
  BOOST_TEST(got->find_scope("todo:admin") == nullptr);
  BOOST_TEST(got->create_time == created->create_time);

  // The same URL spelled differently is the same resource.
  auto dup = store.create(fields("Other", "HTTPS://TODO.example.com/mcp/"));
  BOOST_TEST(dup.status().code() == Code::kAlreadyExists);

  ResourceFields change;
  change.dcr_enabled = false;
  change.access_token_ttl_seconds = 120;
  auto updated = store.update(created->id, change);
  BOOST_REQUIRE_MESSAGE(updated.is_ok(), updated.status().to_string());
  BOOST_TEST(!updated->dcr_enabled);
  BOOST_TEST(updated->cimd_enabled);
  BOOST_TEST(updated->name == "Todo");
  BOOST_TEST(updated->scopes.size() == 2u);
  BOOST_TEST(store.get(created->id)->access_token_ttl_seconds == 120);

  // The store's lifetime bound comes from its owner (config), not only from 86400.
  ResourceFields too_long;
  too_long.access_token_ttl_seconds = 7201;
  BOOST_TEST(store.update(created->id, too_long).status().code() == Code::kInvalidArgument);
  too_long.access_token_ttl_seconds = 59;
  BOOST_TEST(store.update(created->id, too_long).status().code() == Code::kInvalidArgument);

  // An update onto another resource's URL conflicts; a failed update changes nothing.
  auto second = store.create(fields("Second", "https://second.example.com/mcp"));
  BOOST_REQUIRE(second.is_ok());
  ResourceFields move;
  move.server_url = "https://todo.example.com/mcp";
  BOOST_TEST(store.update(second->id, move).status().code() == Code::kAlreadyExists);
  BOOST_TEST(store.get(second->id)->server_url == "https://second.example.com/mcp");

  BOOST_TEST(store.remove(created->id).is_ok());
  BOOST_TEST(store.get(created->id).status().code() == Code::kNotFound);
  BOOST_TEST(store.remove(created->id).code() == Code::kNotFound);
  BOOST_TEST(store.update(created->id, change).status().code() == Code::kNotFound);
  // Its URL is free again.
  BOOST_TEST(store.create(fields("Again", "https://todo.example.com/mcp")).is_ok());
  BOOST_TEST(store.get("res_nonsense").status().code() == Code::kNotFound);
}

BOOST_AUTO_TEST_CASE(store_validates_every_field) {
  auto config = testing::test_config();
  store::Db db(config->db);
  BOOST_REQUIRE(store::migrate(db, store::embedded_migrations()).is_ok());
  ResourceStore store(db);
  auto bad = [&](ResourceFields f) { return store.create(f).status().code(); };
  ResourceFields no_name;
  no_name.server_url = "https://v.example.com/";
  BOOST_TEST(bad(no_name) == Code::kInvalidArgument);
  ResourceFields no_url;
  no_url.name = "x";
  BOOST_TEST(bad(no_url) == Code::kInvalidArgument);
  BOOST_TEST(bad(fields("", "https://v.example.com/")) == Code::kInvalidArgument);
  BOOST_TEST(bad(fields("   ", "https://v.example.com/")) == Code::kInvalidArgument);
  BOOST_TEST(bad(fields("a\nb", "https://v.example.com/")) == Code::kInvalidArgument);
  BOOST_TEST(bad(fields("\xff", "https://v.example.com/")) == Code::kInvalidArgument);
  BOOST_TEST(bad(fields(std::string(201, 'n'), "https://v.example.com/")) ==
             Code::kInvalidArgument);
  BOOST_TEST(bad(fields("v", "http://v.example.com/")) == Code::kInvalidArgument);
  ResourceFields dup_scopes = fields("v", "https://v.example.com/");
  dup_scopes.scopes = std::vector<ScopeDef>{{"a", ""}, {"a", "again"}};
  BOOST_TEST(bad(dup_scopes) == Code::kInvalidArgument);
  ResourceFields bad_scope = fields("v", "https://v.example.com/");
  bad_scope.scopes = std::vector<ScopeDef>{{"a b", ""}};
  BOOST_TEST(bad(bad_scope) == Code::kInvalidArgument);
  ResourceFields too_many = fields("v", "https://v.example.com/");
  too_many.scopes = std::vector<ScopeDef>();
  for (int i = 0; i < 101; ++i) too_many.scopes->push_back({"s" + std::to_string(i), ""});
  BOOST_TEST(bad(too_many) == Code::kInvalidArgument);
  ResourceFields too_long = fields("v", "https://v.example.com/");
  too_long.scopes = std::vector<ScopeDef>();
  for (int i = 0; i < 20; ++i) too_long.scopes->push_back({std::string(120, 'a' + i), ""});
  BOOST_TEST(bad(too_long) == Code::kInvalidArgument);
  ResourceFields long_description = fields("v", "https://v.example.com/");
  long_description.scopes = std::vector<ScopeDef>{{"a", std::string(501, 'd')}};
  BOOST_TEST(bad(long_description) == Code::kInvalidArgument);
}

BOOST_AUTO_TEST_CASE(store_lists_in_creation_order) {
  auto config = testing::test_config();
  store::Db db(config->db);
  BOOST_REQUIRE(store::migrate(db, store::embedded_migrations()).is_ok());
  BOOST_REQUIRE(db.execute("DELETE FROM resources").is_ok());
  ResourceStore store(db);
  std::vector<std::string> made;
  for (int i = 0; i < 3; ++i) {
    auto r = store.create(
        fields("L" + std::to_string(i), "https://l" + std::to_string(i) + ".example.com/mcp"));
    BOOST_REQUIRE(r.is_ok());
    made.push_back(r->id);
  }
  paging::TokenCodec codec(std::string(32, 'k'), ResourceStore::listing());
  paging::PageRequest request;
  request.page_size = 2;
  auto first = store.list(request, codec);
  BOOST_REQUIRE(first.is_ok());
  BOOST_REQUIRE(first->items.size() == 2u);
  BOOST_TEST(first->items[0].id == made[0]);
  BOOST_TEST(first->items[1].id == made[1]);
  BOOST_TEST(first->total_size == 3);
  request.token = codec.decode(first->next_page_token).value();
  auto second = store.list(request, codec);
  BOOST_REQUIRE(second.is_ok());
  BOOST_REQUIRE(second->items.size() == 1u);
  BOOST_TEST(second->items[0].id == made[2]);
  BOOST_TEST(second->next_page_token == "");
}

BOOST_AUTO_TEST_CASE(a_worker_remembers_a_resource_for_a_few_seconds) {
  auto config = testing::test_config();
  store::Db db(config->db);
  BOOST_REQUIRE(store::migrate(db, store::embedded_migrations()).is_ok());
  ResourceStore store(db);
  ResourceFields fields;
  fields.name = "Cached";
  fields.server_url = "https://" + new_id("cache_") + ".example/mcp";
  fields.access_token_ttl_seconds = 600;
  auto made = store.create(fields);
  BOOST_REQUIRE_MESSAGE(made.is_ok(), made.status().to_string());
  ResourceCache cache;
  constexpr int64_t kNow = 1'800'000'000;
  // Unknown: NotFound.
  const std::string missing = new_id("res_");
  BOOST_TEST(cache.get(db, missing, kNow).status().code() == Code::kNotFound);
  BOOST_TEST(cache.get(db, made->id, kNow)->access_token_ttl_seconds == 600);
  // An edit reaches the cache's answers once its entry is kTtlSeconds old, not before.
  ResourceFields longer;
  longer.access_token_ttl_seconds = 1200;
  BOOST_REQUIRE(store.update(made->id, longer).is_ok());
  const int64_t stale = kNow + ResourceCache::kTtlSeconds - 1;
  BOOST_TEST(cache.get(db, made->id, stale)->access_token_ttl_seconds == 600);
  const int64_t fresh = kNow + ResourceCache::kTtlSeconds;
  BOOST_TEST(cache.get(db, made->id, fresh)->access_token_ttl_seconds == 1200);
  // A deleted resource: gone from the store at once, from the cache after kTtlSeconds.
  BOOST_REQUIRE(store.remove(made->id).is_ok());
  BOOST_TEST(cache.get(db, made->id, fresh + ResourceCache::kTtlSeconds).status().code() ==
             Code::kNotFound);
}
