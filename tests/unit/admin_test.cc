// The admin portal's pure rules: where a sign-in may send the browser back to (never another
// origin: an open redirect would hand a fresh admin session's first page to anyone), and the
// environment roles a user may hold.
#define BOOST_TEST_MODULE admin
#include <boost/test/unit_test.hpp>

#include "admin/portal_signin.h"
#include "identity/user_store.h"

using namespace portcullis;

BOOST_AUTO_TEST_CASE(next_stays_inside_the_portal) {
  for (const char* ok : {"/admin", "/admin/", "/admin/users", "/admin/users?email=a%40b.c",
                         "/admin?x=1", "/admin/organizations/org_1/domains/dom_2"}) {
    BOOST_TEST(admin::safe_next(ok) == ok, ok);
  }
  for (const char* bad :
       {"", "/", "https://evil.example/admin", "//evil.example/admin", "/administrator",
        "/admin//evil.example", "/admin/\\evil", "/admin/a b", "/admin/\r\nSet-Cookie:x=1",
        "/oauth/login", "admin/users", "/admin/\x7f", "/admin/\xc3\xa9"}) {
    BOOST_TEST(admin::safe_next(bad) == "/admin", bad);
  }
  BOOST_TEST(admin::safe_next("/admin/" + std::string(600, 'a')) == "/admin");
}

BOOST_AUTO_TEST_CASE(environment_roles_are_admin_only_and_unrepeated) {
  BOOST_TEST(identity::check_environment_roles({}).is_ok());
  BOOST_TEST(identity::check_environment_roles({"admin"}).is_ok());
  BOOST_TEST(!identity::check_environment_roles({"root"}).is_ok());
  BOOST_TEST(!identity::check_environment_roles({"Admin"}).is_ok());
  BOOST_TEST(!identity::check_environment_roles({"admin", "admin"}).is_ok());
  identity::User u;
  BOOST_TEST(!u.is_environment_admin());
  u.environment_roles = {"admin"};
  BOOST_TEST(u.is_environment_admin());
}
