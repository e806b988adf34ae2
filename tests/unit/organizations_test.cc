#define BOOST_TEST_MODULE organizations
#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "db_fixture.h"
#include "format/metadata.h"
#include "identity/user_listing.h"
#include "identity/user_store.h"
#include "organizations/membership_store.h"
#include "organizations/organization_store.h"
#include "paging/counter.h"
#include "store/migrate.h"
#include "store/migrations.h"
#include "tokens/grant_revocation.h"
#include "tokens/grants.h"
#include "validation/deny_list.h"

using namespace portcullis;
using namespace portcullis::organizations;

namespace {

std::unique_ptr<store::Db> migrated_db() {
  auto config = testing::test_config();
  auto db = std::make_unique<store::Db>(config->db);
  BOOST_REQUIRE(store::migrate(*db, store::embedded_migrations()).is_ok());
  return db;
}

std::string unique_email() {
  return "member-" + new_id("usr_").substr(4) + "@example.com";
}

identity::User new_user(store::Db& db) {
  identity::UserFields f;
  f.email = unique_email();
  auto u = identity::UserStore(db).create(f);
  BOOST_REQUIRE(u.is_ok());
  return *u;
}

Organization new_org(store::Db& db) {
  OrganizationFields f;
  f.display_name = "Unit " + new_id("org_");
  auto o = OrganizationStore(db).create(f);
  BOOST_REQUIRE(o.is_ok());
  return *o;
}

int64_t count(store::Db& db, std::string_view scope) {
  auto n = paging::read_count(db, scope);
  BOOST_REQUIRE(n.is_ok());
  return *n;
}

// The counters must always move with what COUNT(*) says. Other unit tests insert users behind
// the store's back into the same database, so the environment count is compared as the
// difference to COUNT(*), which no write through the stores may change.
int64_t users_drift(store::Db& db) {
  auto users = db.query("SELECT COUNT(*) FROM users");
  BOOST_REQUIRE(users.is_ok());
  return (*users)[0].i64(0) - count(db, paging::kEnvironmentUsers);
}

void expect_counts_exact(store::Db& db, const std::string& org_id, int64_t drift) {
  auto members = db.query("SELECT COUNT(*) FROM memberships WHERE organization_id = ?", {org_id});
  BOOST_REQUIRE(members.is_ok());
  BOOST_TEST(users_drift(db) == drift);
  BOOST_TEST(count(db, org_id) == (*members)[0].i64(0));
}

}  // namespace

BOOST_AUTO_TEST_CASE(organization_ids_given_by_callers) {
  for (const char* ok : {"org_a", "org_01jd3k6v2q8x4n7r9t0w5y1z3b", "org_A-b_C",
                         "org_aaaaaaaaaaaaaaaaaaaaaaaaaaaa"}) {
    BOOST_TEST(check_organization_id(ok).is_ok(), ok);
  }
  for (const char* bad : {"", "org_", "org", "acme", "ORG_abc", "org_a.b", "org_a b", "org_a/b",
                          "org_é", "org_aaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "usr_abc"}) {
    BOOST_TEST(check_organization_id(bad).code() == Code::kInvalidArgument, bad);
  }
}

BOOST_AUTO_TEST_CASE(membership_fields_are_checked) {
  MembershipFields f;
  BOOST_TEST(check_membership_fields(f).is_ok());
  f.roles = {"admin", "billing:read", "a.b-c_d"};
  BOOST_TEST(check_membership_fields(f).is_ok());
  for (const std::string& bad :
       std::vector<std::string>{"", "-lead", "has space", std::string(65, 'a'), "é"}) {
    MembershipFields g;
    g.roles = {bad};
    BOOST_TEST(check_membership_fields(g).code() == Code::kInvalidArgument, bad);
  }
  MembershipFields twice;
  twice.roles = {"a", "a"};
  BOOST_TEST(!check_membership_fields(twice).is_ok());
  MembershipFields status;
  status.status = "deleted";
  BOOST_TEST(!check_membership_fields(status).is_ok());
}

BOOST_AUTO_TEST_CASE(metadata_is_an_object_without_nulls_and_bounded) {
  Json::Value ok(Json::objectValue);
  ok["a"]["b"] = Json::Value(Json::arrayValue);
  ok["a"]["b"].append(1);
  BOOST_TEST(format::check_metadata(ok).is_ok());
  Json::Value with_null = ok;
  with_null["a"]["b"].append(Json::Value());
  BOOST_TEST(!format::check_metadata(with_null).is_ok());
  BOOST_TEST(!format::check_metadata(Json::Value(Json::arrayValue)).is_ok());
  Json::Value big(Json::objectValue);
  big["x"] = std::string(format::kMaxMetadataBytes, 'x');
  BOOST_TEST(!format::check_metadata(big).is_ok());
  BOOST_TEST(format::parse_stored_metadata("not json").isObject());
}

BOOST_AUTO_TEST_CASE(counter_shards_sum_to_the_count) {
  auto db = migrated_db();
  std::string scope = new_id("org_");
  BOOST_TEST(count(*db, scope) == 0);
  for (int i = 0; i < 40; ++i)
    BOOST_REQUIRE(paging::add_to_count(*db, scope, new_id("usr_"), 1).is_ok());
  BOOST_TEST(count(*db, scope) == 40);
  auto shards = db->query("SELECT COUNT(*) FROM listing_counts WHERE scope = ?", {scope});
  BOOST_REQUIRE(shards.is_ok());
  BOOST_TEST((*shards)[0].i64(0) > 1);  // spread, not one hot row
  BOOST_TEST((*shards)[0].i64(0) <= paging::kCountShards);
  std::string id = new_id("usr_");
  BOOST_REQUIRE(paging::add_to_count(*db, scope, id, 1).is_ok());
  BOOST_REQUIRE(paging::add_to_count(*db, scope, id, -1).is_ok());
  BOOST_TEST(count(*db, scope) == 40);
  BOOST_REQUIRE(paging::drop_count(*db, scope).is_ok());
  BOOST_TEST(count(*db, scope) == 0);
}

BOOST_AUTO_TEST_CASE(every_write_keeps_the_counts_exact) {
  auto db = migrated_db();
  Organization org = new_org(*db);
  const int64_t drift = users_drift(*db);
  expect_counts_exact(*db, org.id, drift);
  MembershipStore memberships(*db);
  identity::User a = new_user(*db);
  identity::User b = new_user(*db);
  auto put = memberships.put(org.id, a.id, MembershipFields{}, "api");
  BOOST_REQUIRE(put.is_ok());
  BOOST_TEST(put->created);
  auto again = memberships.put(org.id, a.id, MembershipFields{.roles = {"admin"}}, "api");
  BOOST_REQUIRE(again.is_ok());
  BOOST_TEST(!again->created);
  BOOST_TEST(again->membership.join_time == put->membership.join_time);
  BOOST_REQUIRE(memberships.put(org.id, b.id, MembershipFields{}, "scim").is_ok());
  BOOST_TEST(count(*db, org.id) == 2);
  expect_counts_exact(*db, org.id, drift);

  // Sign-in creates users through the same store.
  auto signed_in = identity::UserStore(*db).find_or_create_by_verified_email(
      "signin-" + new_id("usr_").substr(4) + "@example.com");
  BOOST_REQUIRE(signed_in.is_ok());
  expect_counts_exact(*db, org.id, drift);

  BOOST_REQUIRE(identity::UserStore(*db).remove(a.id).is_ok());
  BOOST_TEST(count(*db, org.id) == 1);
  expect_counts_exact(*db, org.id, drift);
  BOOST_TEST(memberships.remove(org.id, a.id).code() == Code::kNotFound);
  BOOST_REQUIRE(memberships.remove(org.id, b.id).is_ok());
  BOOST_TEST(memberships.remove(org.id, b.id).code() == Code::kNotFound);
  expect_counts_exact(*db, org.id, drift);

  BOOST_REQUIRE(memberships.put(org.id, b.id, MembershipFields{}, "api").is_ok());
  BOOST_REQUIRE(OrganizationStore(*db).remove(org.id).is_ok());
  expect_counts_exact(*db, org.id, drift);
  BOOST_TEST(memberships.put(org.id, b.id, MembershipFields{}, "api").status().code() ==
             Code::kNotFound);
  BOOST_REQUIRE(identity::UserStore(*db).remove(b.id).is_ok());
  BOOST_REQUIRE(identity::UserStore(*db).remove(signed_in->id).is_ok());
  expect_counts_exact(*db, org.id, drift);
}

BOOST_AUTO_TEST_CASE(organization_listing_holds_only_its_members_and_memberships) {
  auto db = migrated_db();
  Organization one = new_org(*db);
  Organization two = new_org(*db);
  MembershipStore memberships(*db);
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    identity::User u = new_user(*db);
    ids.push_back(u.id);
    BOOST_REQUIRE(memberships.put(one.id, u.id, MembershipFields{}, "api").is_ok());
    if (i % 2 == 0) BOOST_REQUIRE(memberships.put(two.id, u.id, MembershipFields{}, "api").is_ok());
  }
  paging::TokenCodec codec(std::string(32, 'k'), organization_users_listing(one.id));
  paging::PageRequest request;
  request.page_size = 3;
  auto page = list_organization_users(*db, one.id, request, codec);
  BOOST_REQUIRE(page.is_ok());
  BOOST_TEST(page->total_size == 5);
  BOOST_REQUIRE(page->items.size() == 3u);
  for (size_t i = 0; i < 3; ++i) {
    BOOST_TEST(page->items[i].user.id == ids[i]);
    BOOST_REQUIRE(page->items[i].memberships.size() == 1u);
    BOOST_TEST(page->items[i].memberships[0].organization_id == one.id);
  }
  BOOST_TEST(page->next_page_token != "");
  BOOST_TEST(page->prev_page_token == "");
  auto unknown = list_organization_users(*db, "org_unknown", request, codec);
  BOOST_TEST(unknown.status().code() == Code::kNotFound);
}

// The revocation cascades (oauth/grant_revocation.h) as a validator sees them: each action
// revokes exactly the grants it ends, in the same transaction, and the revoked grant rows stay
// so a DenyList synced afterwards refuses every access token they cover.
BOOST_AUTO_TEST_CASE(revocation_cascades_reach_the_deny_list_and_outlive_the_deletion) {
  auto db = migrated_db();
  const Organization org = new_org(*db);
  const Organization other_org = new_org(*db);
  const Organization deactivating_org = new_org(*db);
  const identity::User member = new_user(*db);
  const identity::User deleted = new_user(*db);
  MembershipStore memberships(*db);
  BOOST_REQUIRE(memberships.put(org.id, member.id, MembershipFields{}, "api").is_ok());
  BOOST_REQUIRE(memberships.put(other_org.id, member.id, MembershipFields{}, "api").is_ok());
  BOOST_REQUIRE(memberships.put(deactivating_org.id, member.id, MembershipFields{}, "api").is_ok());
  BOOST_REQUIRE(memberships.put(org.id, deleted.id, MembershipFields{}, "api").is_ok());

  oauth::GrantStore grants(*db);
  const int64_t now = unix_now();
  auto grant_of = [&](const std::string& user_id, const std::string& organization_id) {
    oauth::Grant g{.user_id = user_id,
                   .client_id = "dcr_cascade_test",
                   .resource_id = "res_" + std::string(26, '0'),
                   .scope = "demo:read",
                   .auth_time = now,
                   .organization_id = organization_id,
                   .absolute_expires_at = now + 86400};
    BOOST_REQUIRE(grants.create(g).is_ok());
    return g.id + "." + new_id("jti_");
  };
  const std::string through_org = grant_of(member.id, org.id);
  const std::string through_other = grant_of(member.id, other_org.id);
  const std::string without_org = grant_of(member.id, "");
  const std::string through_deactivated = grant_of(member.id, deactivating_org.id);
  const std::string of_deleted = grant_of(deleted.id, org.id);
  const std::string of_deleted_no_org = grant_of(deleted.id, "");
  auto reason = [&](const std::string& jti) {
    auto rows = db->query("SELECT COALESCE(revoke_reason, '') FROM grants WHERE id = ?",
                          {jti.substr(0, jti.find('.'))});
    BOOST_REQUIRE(rows.is_ok());
    return rows->empty() ? std::string("(row gone)") : (*rows)[0].str(0);
  };

  validation::DenyList deny(1000);
  int64_t tick = 0;
  auto sync = [&] { BOOST_REQUIRE(deny.sync_if_due(*db, tick += 1000, unix_now()).is_ok()); };
  sync();
  for (const auto& jti : {through_org, through_other, without_org, through_deactivated, of_deleted,
                          of_deleted_no_org}) {
    BOOST_TEST(!deny.revoked(jti));
  }

  // Membership removed: the grants held through that organization only.
  BOOST_REQUIRE(memberships.remove(org.id, member.id).is_ok());
  sync();
  BOOST_TEST(deny.revoked(through_org));
  BOOST_TEST(reason(through_org) == "membership_removed");
  BOOST_TEST(!deny.revoked(through_other));
  BOOST_TEST(!deny.revoked(without_org));
  BOOST_TEST(!deny.revoked(through_deactivated));

  // Membership made inactive: the grants held through that organization only, as on removal.
  MembershipFields inactive;
  inactive.status = "inactive";
  BOOST_REQUIRE(memberships.put(deactivating_org.id, member.id, inactive, "api").is_ok());
  sync();
  BOOST_TEST(deny.revoked(through_deactivated));
  BOOST_TEST(reason(through_deactivated) == "membership_deactivated");
  BOOST_TEST(!deny.revoked(through_other));
  BOOST_TEST(!deny.revoked(without_org));

  // User deleted: every grant of theirs, and the rows stay for the validators.
  BOOST_REQUIRE(identity::UserStore(*db).remove(deleted.id).is_ok());
  sync();
  BOOST_TEST(deny.revoked(of_deleted));
  BOOST_TEST(deny.revoked(of_deleted_no_org));
  BOOST_TEST(reason(of_deleted_no_org) == "user_deleted");
  validation::DenyList fresh_worker(1000);  // a worker that starts after the deletion
  BOOST_REQUIRE(fresh_worker.sync_if_due(*db, 0, unix_now()).is_ok());
  BOOST_TEST(fresh_worker.revoked(of_deleted_no_org));

  // Organization deleted: the grants held through it.
  BOOST_REQUIRE(OrganizationStore(*db).remove(other_org.id).is_ok());
  sync();
  BOOST_TEST(deny.revoked(through_other));
  BOOST_TEST(reason(through_other) == "organization_deleted");
  BOOST_TEST(!deny.revoked(without_org));
  BOOST_TEST(reason(without_org) == "");

  // Pruning keeps a revoked grant until no token it covers can be valid anywhere.
  BOOST_REQUIRE(grants.prune(now + oauth::kRevokedGrantRetentionSeconds - 1000).is_ok());
  BOOST_TEST(reason(of_deleted_no_org) == "user_deleted");
  BOOST_REQUIRE(grants.prune(now + oauth::kRevokedGrantRetentionSeconds + 1000).is_ok());
  BOOST_TEST(reason(of_deleted_no_org) == "(row gone)");
}
