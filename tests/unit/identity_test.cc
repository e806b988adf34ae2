#define BOOST_TEST_MODULE identity
#include <boost/test/unit_test.hpp>
#include <memory>
#include <set>

#include "core/ids.h"
#include "crypto/hash.h"
#include "db_fixture.h"
#include "identity/email_address.h"
#include "identity/email_challenges.h"
#include "identity/session_store.h"
#include "identity/user_store.h"
#include "organizations/membership_store.h"
#include "organizations/organization_store.h"
#include "store/migrate.h"

using namespace portcullis;

namespace {

constexpr int64_t kNow = 1'800'000'000;

std::unique_ptr<store::Db> migrated_db(const std::optional<config::Config>& config) {
  auto db = std::make_unique<store::Db>(config->db);
  BOOST_REQUIRE(store::migrate(*db, store::embedded_migrations()).is_ok());
  return db;
}

std::string unique_email(std::string_view tag) {
  return std::string(tag) + "-" + new_id("usr_").substr(4) + "@Example.COM";
}

http::Request with_cookie(const std::string& cookie_header) {
  http::Request r;
  r.headers["cookie"] = cookie_header;
  r.headers["user-agent"] = "unit-test";
  r.remote_addr = "192.0.2.7";
  return r;
}

// "name=value; Path=/; ..." → "name=value"
std::string cookie_pair(const std::string& set_cookie) {
  return set_cookie.substr(0, set_cookie.find(';'));
}

}  // namespace

BOOST_AUTO_TEST_CASE(email_addresses_are_plain_and_normalised) {
  BOOST_TEST(*identity::normalize_email("  Ann.Lee+mcp@Example.COM \n") ==
             "Ann.Lee+mcp@example.com");
  for (const char* bad :
       {"", "ann", "ann@", "@example.com", "ann@localhost", "a b@example.com", "ann@example..com",
        ".ann@example.com", "ann@-x.example", "ann@example.com\r\nBcc: x@y.z", "\"a\"@example.com",
        "<a@b.example>", "jos\xc3\xa9@example.com", "a@b@example.com"}) {
    BOOST_TEST(!identity::normalize_email(bad).is_ok(), bad);
  }
  BOOST_TEST(!identity::normalize_email(std::string(250, 'a') + "@x.example").is_ok());
  BOOST_TEST(identity::email_key("Ann@Example.com") == "ann@example.com");
}

BOOST_AUTO_TEST_CASE(codes_are_six_uniform_digits) {
  std::set<char> first_digits;
  for (int i = 0; i < 400; ++i) {
    std::string c = identity::new_signin_code();
    BOOST_REQUIRE(c.size() == 6u);
    for (char d : c) BOOST_REQUIRE((d >= '0' && d <= '9'));
    first_digits.insert(c[0]);
  }
  BOOST_TEST(first_digits.size() == 10u);  // leading zeros happen: codes are zero-padded
  BOOST_TEST(identity::normalize_code(" 123 456 ") == "123456");
  BOOST_TEST(identity::normalize_code("123-456") == "123456");
}

BOOST_AUTO_TEST_CASE(users_found_or_created_case_insensitively) {
  auto config = testing::test_config();
  auto db = migrated_db(config);
  identity::UserStore users(*db);
  std::string email = *identity::normalize_email(unique_email("Ann"));
  auto created = users.find_or_create_by_verified_email(email);
  BOOST_REQUIRE(created.is_ok());
  BOOST_TEST(is_valid_id(created->id, "usr_"));
  BOOST_TEST(created->email_verified);
  BOOST_TEST(created->active);
  auto again = users.find_or_create_by_verified_email(identity::email_key(email));
  BOOST_REQUIRE(again.is_ok());
  BOOST_TEST(again->id == created->id);
  BOOST_TEST(again->email == email);  // as first typed
  BOOST_TEST(users.get(created->id)->email == email);
  BOOST_TEST(users.get("usr_nosuchuser").status().code() == Code::kNotFound);

  // An unverified, deactivated account made elsewhere: verified by the sign-in, still inactive.
  std::string other = *identity::normalize_email(unique_email("bob"));
  std::string id = new_id("usr_");
  BOOST_REQUIRE(db->execute("INSERT INTO users (id, email, email_verified, active, metadata, "
                            "create_time, update_time) VALUES (?, ?, FALSE, FALSE, '{}', NOW(6), "
                            "NOW(6))",
                            {id, other})
                    .is_ok());
  auto bob = users.find_or_create_by_verified_email(other);
  BOOST_REQUIRE(bob.is_ok());
  BOOST_TEST(bob->id == id);
  BOOST_TEST(bob->email_verified);
  BOOST_TEST(!bob->active);

  // The column's collation equates "josé" and "jose": sign-in must not take that as the same.
  std::string tag = new_id("usr_").substr(4);
  BOOST_REQUIRE(db->execute("INSERT INTO users (id, email, email_verified, active, metadata, "
                            "create_time, update_time) VALUES (?, ?, TRUE, TRUE, '{}', NOW(6), "
                            "NOW(6))",
                            {new_id("usr_"), "jos\xc3\xa9" + tag + "@example.com"})
                    .is_ok());
  auto lookalike = users.find_or_create_by_verified_email("jose" + tag + "@example.com");
  BOOST_TEST(lookalike.status().code() == Code::kFailedPrecondition);
}

BOOST_AUTO_TEST_CASE(session_cookies_and_lookup) {
  auto config = testing::test_config();
  auto db = migrated_db(config);
  identity::UserStore users(*db);
  auto user =
      *users.find_or_create_by_verified_email(*identity::normalize_email(unique_email("sess")));

  config::Config local = *config;
  local.base_url = "http://127.0.0.1:8080";
  local.session_lifetime_seconds = 3600;
  identity::SessionStore sessions(*db, local);
  BOOST_TEST(sessions.cookie_name() == "portcullis_session");
  auto set_cookie = sessions.create(user.id, kNow - 5, with_cookie(""), kNow);
  BOOST_REQUIRE(set_cookie.is_ok());
  BOOST_TEST(set_cookie->rfind("portcullis_session=", 0) == 0u);
  BOOST_TEST(set_cookie->find("; Path=/; Max-Age=3600") != std::string::npos);
  BOOST_TEST(set_cookie->find("; HttpOnly; SameSite=Lax") != std::string::npos);
  BOOST_TEST(set_cookie->find("Secure") == std::string::npos);
  BOOST_TEST(set_cookie->find("Domain") == std::string::npos);
  std::string pair = cookie_pair(*set_cookie);
  std::string token = pair.substr(pair.find('=') + 1);
  BOOST_TEST(token.size() == 43u);  // 256 bits

  // Only the hash is stored.
  auto stored = db->query("SELECT COUNT(*) FROM browser_sessions WHERE token_hash = ?",
                          {crypto::sha256(token)});
  BOOST_TEST((*stored)[0].i64(0) == 1);

  auto current = sessions.current(with_cookie("other=1; " + pair), kNow + 10);
  BOOST_REQUIRE(current.has_value());
  BOOST_TEST(current->user_id == user.id);
  BOOST_TEST(current->auth_time == kNow - 5);
  BOOST_TEST(!sessions.current(with_cookie(pair), kNow + 3600));  // expired
  BOOST_TEST(!sessions.current(with_cookie("portcullis_session=forged"), kNow));
  BOOST_TEST(!sessions.current(with_cookie("__Host-" + pair), kNow));  // wrong name for http
  BOOST_TEST(!sessions.current(http::Request{}, kNow));

  // A new sign-in in the same browser revokes the session its cookie named.
  auto second = sessions.create(user.id, kNow, with_cookie(pair), kNow);
  BOOST_REQUIRE(second.is_ok());
  BOOST_TEST(!sessions.current(with_cookie(pair), kNow + 1));
  BOOST_TEST(sessions.current(with_cookie(cookie_pair(*second)), kNow + 1).has_value());

  // Deactivated users have no session; revoke_all ends them for good.
  BOOST_REQUIRE(db->execute("UPDATE users SET active = FALSE WHERE id = ?", {user.id}).is_ok());
  BOOST_TEST(!sessions.current(with_cookie(cookie_pair(*second)), kNow + 1));
  BOOST_REQUIRE(db->execute("UPDATE users SET active = TRUE WHERE id = ?", {user.id}).is_ok());
  BOOST_TEST(sessions.revoke_all_for_user(user.id).is_ok());
  BOOST_TEST(!sessions.current(with_cookie(cookie_pair(*second)), kNow + 1));

  // https: the __Host- prefix and Secure.
  config::Config prod = *config;
  prod.base_url = "https://auth.example.com";
  identity::SessionStore secure(*db, prod);
  auto host_cookie = secure.create(user.id, kNow, with_cookie(""), kNow);
  BOOST_REQUIRE(host_cookie.is_ok());
  BOOST_TEST(host_cookie->rfind("__Host-portcullis_session=", 0) == 0u);
  BOOST_TEST(host_cookie->find("; Path=/;") != std::string::npos);
  BOOST_TEST(host_cookie->find("; Secure; HttpOnly; SameSite=Lax") != std::string::npos);
  BOOST_TEST(secure.current(with_cookie(cookie_pair(*host_cookie)), kNow + 1).has_value());
  BOOST_TEST(secure.clearing_cookie().find("Max-Age=0") != std::string::npos);
  BOOST_TEST(identity::SessionStore::prune(*db, kNow + 10 * 86400).is_ok());
}

// docs/oauth.md, "The organization in a token": the session remembers the organization it
// signed in through, and lasts only as long as the user's membership of it.
BOOST_AUTO_TEST_CASE(a_session_signed_in_through_an_organization_ends_with_the_membership) {
  auto config = testing::test_config();
  auto db = migrated_db(config);
  auto user = *identity::UserStore(*db).find_or_create_by_verified_email(
      *identity::normalize_email(unique_email("org-sess")));
  organizations::OrganizationFields fields;
  fields.display_name = "Unit " + new_id("org_");
  auto org = organizations::OrganizationStore(*db).create(fields);
  BOOST_REQUIRE(org.is_ok());
  organizations::MembershipStore memberships(*db);
  BOOST_REQUIRE(
      memberships.put(org->id, user.id, organizations::MembershipFields{}, "sso").is_ok());

  config::Config local = *config;
  local.base_url = "http://127.0.0.1:8080";
  identity::SessionStore sessions(*db, local);
  auto through_org = sessions.create(user.id, kNow, with_cookie(""), kNow, org->id);
  auto plain = sessions.create(user.id, kNow, with_cookie(""), kNow);
  BOOST_REQUIRE(through_org.is_ok());
  BOOST_REQUIRE(plain.is_ok());
  auto current = sessions.current(with_cookie(cookie_pair(*through_org)), kNow + 1);
  BOOST_REQUIRE(current.has_value());
  BOOST_TEST(current->organization_id == org->id);
  BOOST_TEST(sessions.current(with_cookie(cookie_pair(*plain)), kNow + 1)->organization_id == "");

  // A deactivated membership ends the organization's session, not the other one; active again,
  // the session is back (it was never revoked).
  organizations::MembershipFields inactive;
  inactive.status = "inactive";
  BOOST_REQUIRE(memberships.put(org->id, user.id, inactive, "sso").is_ok());
  BOOST_TEST(!sessions.current(with_cookie(cookie_pair(*through_org)), kNow + 1));
  BOOST_TEST(sessions.current(with_cookie(cookie_pair(*plain)), kNow + 1).has_value());
  BOOST_REQUIRE(
      memberships.put(org->id, user.id, organizations::MembershipFields{}, "sso").is_ok());
  BOOST_TEST(sessions.current(with_cookie(cookie_pair(*through_org)), kNow + 1).has_value());
  // Removed: ended.
  BOOST_REQUIRE(memberships.remove(org->id, user.id).is_ok());
  BOOST_TEST(!sessions.current(with_cookie(cookie_pair(*through_org)), kNow + 1));
  BOOST_TEST(sessions.current(with_cookie(cookie_pair(*plain)), kNow + 1).has_value());
}

BOOST_AUTO_TEST_CASE(codes_expire_are_single_use_and_die_after_five_attempts) {
  auto config = testing::test_config();
  auto db = migrated_db(config);
  identity::EmailChallenges challenges(*db);
  using Outcome = identity::CodeCheck::Outcome;
  const std::string lr = "lr-" + new_id("usr_");
  auto wrong_code = [](const std::string& code) { return code == "000000" ? "000001" : "000000"; };

  // Five wrong attempts: four say how many are left, the fifth kills the code.
  auto first = challenges.start(lr, "a@example.com", kNow);
  BOOST_REQUIRE(first.is_ok());
  for (int i = 1; i <= 4; ++i) {
    auto check = challenges.check_code(lr, wrong_code(first->code), kNow + i);
    BOOST_REQUIRE(check.is_ok());
    BOOST_TEST((check->outcome == Outcome::kWrong));
    BOOST_TEST(check->attempts_left == 5 - i);
    BOOST_TEST(check->challenge.email == "a@example.com");
  }
  BOOST_TEST((challenges.check_code(lr, "not a code", kNow + 5)->outcome == Outcome::kLocked));
  BOOST_TEST((challenges.check_code(lr, first->code, kNow + 6)->outcome == Outcome::kNoChallenge));
  BOOST_TEST(!challenges.find_by_link(first->link_token, kNow + 6)->has_value());  // dies too

  // A right code works once; the link is gone with it.
  auto second = challenges.start(lr, "a@example.com", kNow + 10);
  BOOST_REQUIRE(second.is_ok());
  BOOST_TEST(challenges.live_for(lr, kNow + 10)->has_value());
  auto ok = challenges.check_code(lr, second->code.substr(0, 3) + " " + second->code.substr(3),
                                  kNow + 11);
  BOOST_TEST((ok->outcome == Outcome::kAccepted));
  BOOST_TEST(
      (challenges.check_code(lr, second->code, kNow + 12)->outcome == Outcome::kNoChallenge));
  BOOST_TEST(!challenges.redeem_link(second->link_token, kNow + 12)->has_value());

  // Ten minutes, then nothing.
  auto third = challenges.start(lr, "a@example.com", kNow + 100);
  BOOST_TEST(
      (challenges.check_code(lr, third->code, kNow + 100 + 600)->outcome == Outcome::kNoChallenge));
  BOOST_TEST(!challenges.live_for(lr, kNow + 700)->has_value());

  // A new code retires the previous one (and its link); links work once.
  auto fourth = challenges.start(lr, "a@example.com", kNow + 800);
  auto fifth = challenges.start(lr, "b@example.com", kNow + 801);
  BOOST_TEST(!challenges.find_by_link(fourth->link_token, kNow + 802)->has_value());
  auto found = challenges.find_by_link(fifth->link_token, kNow + 802);
  BOOST_REQUIRE(found->has_value());
  BOOST_TEST((*found)->login_request_id == lr);
  BOOST_TEST((*found)->email == "b@example.com");
  BOOST_TEST(challenges.redeem_link(fifth->link_token, kNow + 803)->has_value());
  BOOST_TEST(!challenges.redeem_link(fifth->link_token, kNow + 804)->has_value());
  BOOST_TEST(
      (challenges.check_code(lr, fifth->code, kNow + 805)->outcome == Outcome::kNoChallenge));
  BOOST_TEST(!challenges.find_by_link("short", kNow)->has_value());

  // Only hashes are stored.
  auto stored = db->query(
      "SELECT COUNT(*) FROM signin_challenges WHERE login_request_id = ? AND "
      "(code_hash = ? OR link_hash = ?)",
      {lr, fifth->code, fifth->link_token});
  BOOST_TEST((*stored)[0].i64(0) == 0);
  auto discard = challenges.start(lr, "a@example.com", kNow + 900);
  BOOST_TEST(challenges.discard(discard->id, kNow + 901).is_ok());
  BOOST_TEST(!challenges.live_for(lr, kNow + 902)->has_value());
  BOOST_TEST(identity::EmailChallenges::prune(*db, kNow + 3 * 86400).is_ok());
  BOOST_TEST(
      (*db->query("SELECT COUNT(*) FROM signin_challenges WHERE login_request_id = ?", {lr}))[0]
          .i64(0) == 0);
}
