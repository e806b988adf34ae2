#define BOOST_TEST_MODULE signin
// The sign-in and consent pages driven through the worker pipeline (server::App), with the
// LoginFlow test double over the real login_requests table, a mailer that keeps what it is
// given, and a clock the tests move.
#include <boost/test/unit_test.hpp>
#include <memory>

#include "core/ids.h"
#include "core/time.h"
#include "crypto/aead.h"
#include "crypto/base64.h"
#include "crypto/random.h"
#include "db_fixture.h"
#include "db_login_flow.h"
#include "keys/key_ring.h"
#include "oauth/signin_organization.h"
#include "signin_routes.h"
#include "store/migrate.h"

using namespace portcullis;

namespace {

constexpr int64_t kStart = 1'900'000'000;

class KeepingMailer : public mail::Mailer {
 public:
  Status send(const mail::SignInMail& m, int64_t) override {
    if (fail) return Status::unavailable("smtp down");
    sent.push_back(m);
    return Status::ok();
  }
  std::vector<mail::SignInMail> sent;
  bool fail = false;
};

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string cookie_pair(const std::string& set_cookie) {
  return set_cookie.substr(0, set_cookie.find(';'));
}

// One worker's worth of services and an App with only the sign-in routes.
struct Stack {
  explicit Stack(config::Config c)
      : config(std::move(c)),
        db(config.db),
        master_key(crypto::MasterKey::from_base64(crypto::base64_encode(crypto::random_bytes(32)))
                       .value()),
        keys(db, master_key, config),
        services{config, db, keys, master_key},
        flow(db),
        mailer(std::make_shared<KeepingMailer>()),
        app(http::Family::kOAuth, services) {
    BOOST_REQUIRE(store::migrate(db, store::embedded_migrations()).is_ok());
    oauth_worker::SigninOptions options;
    options.flow = [this](server::Services&) -> oauth::LoginFlow& { return flow; };
    options.mailer = mailer;
    options.clock = [this] { return now; };
    oauth_worker::install_signin_routes(app, options);
  }

  http::Response get(const std::string& path, const std::string& query,
                     const std::string& cookie = "") {
    http::Request r = base("GET", path, cookie);
    r.query_string = query;
    r.query = *http::parse_urlencoded(query);
    return app.handle(r);
  }

  http::Response post(const std::string& path, const http::Params& form,
                      const std::string& cookie = "", const std::string& fetch_site = "") {
    http::Request r = base("POST", path, cookie);
    std::string body;
    for (const auto& [k, v] : form) {
      if (!body.empty()) body += "&";
      body += http::url_encode(k) + "=" + http::url_encode(v);
    }
    r.body = body;
    r.headers["content-type"] = "application/x-www-form-urlencoded";
    if (!fetch_site.empty()) r.headers["sec-fetch-site"] = fetch_site;
    return app.handle(r);
  }

  http::Request base(const std::string& method, const std::string& path,
                     const std::string& cookie) {
    http::Request r;
    r.method = method;
    r.path = path;
    r.remote_addr = ip;
    r.headers["user-agent"] = "signin-test";
    if (!cookie.empty()) r.headers["cookie"] = cookie;
    return r;
  }

  // A login request for the double; {id, csrf}.
  std::pair<std::string, std::string> login_request(testing::LoginRequestSeed seed = {}) {
    if (!seed.expires_at) seed.expires_at = now + 600;
    auto made = testing::insert_login_request(db, seed);
    BOOST_REQUIRE(made.is_ok());
    return *made;
  }

  // Mails a code for `email` on the login request; returns the mail.
  mail::SignInMail send_code(const std::pair<std::string, std::string>& lr,
                             const std::string& email) {
    auto r = post("/oauth/login/email",
                  {{"login_request_id", lr.first}, {"csrf", lr.second}, {"email", email}});
    BOOST_REQUIRE_MESSAGE(r.status == 303, r.status << " " << r.body);
    BOOST_TEST(r.header("Location").value_or("") ==
               "/oauth/login/code?login_request_id=" + http::url_encode(lr.first));
    return mailer->sent.back();
  }

  int64_t events(const std::string& type, const std::string& login_request_id) {
    app.on_idle();  // the event phase writes what the handlers recorded
    auto rows = db.query(
        "SELECT COUNT(*) FROM events WHERE type = ? AND JSON_VALUE(data, '$.login_request_id') = ?",
        {type, login_request_id});
    return rows ? (*rows)[0].i64(0) : -1;
  }

  config::Config config;
  store::Db db;
  crypto::MasterKey master_key;
  keys::KeyRing keys;
  server::Services services;
  testing::DbLoginFlowDouble flow;
  std::shared_ptr<KeepingMailer> mailer;
  server::App app;
  int64_t now = kStart;
  std::string ip = "198.51.100.1";
};

std::unique_ptr<Stack> stack(std::function<void(config::Config&)> adjust = {}) {
  auto config = testing::test_config();
  config->base_url = "http://127.0.0.1:8080";
  config->mode = "local";
  if (adjust) adjust(*config);
  auto s = std::make_unique<Stack>(*config);
  s->now = unix_now();  // login_requests rows and rate-limit windows use real time
  // A random address per stack: rate-limit windows are real minutes shared by every stack of
  // this binary (and of a rerun within the minute), so addresses must not collide.
  std::string r = crypto::random_bytes(3);
  s->ip = "10." + std::to_string(static_cast<unsigned char>(r[0])) + "." +
          std::to_string(static_cast<unsigned char>(r[1])) + "." +
          std::to_string(static_cast<unsigned char>(r[2]));
  return s;
}

std::string unique_email() {
  return "u-" + new_id("usr_").substr(4) + "@example.com";
}

void check_page(const http::Response& r) {
  BOOST_TEST(r.header("Content-Type").value_or("") == "text/html; charset=utf-8");
  BOOST_TEST(r.header("X-Frame-Options").value_or("") == "DENY");
  BOOST_TEST(r.header("Referrer-Policy").value_or("") == "no-referrer");
  BOOST_TEST(r.header("Cache-Control").value_or("") == "no-store");
  BOOST_TEST(contains(r.header("Content-Security-Policy").value_or(""), "frame-ancestors 'none'"));
}

}  // namespace

BOOST_AUTO_TEST_CASE(unknown_or_expired_login_requests_get_a_400_page) {
  auto s = stack();
  for (const std::string& query : {std::string("login_request_id=nope"), std::string(""),
                                   "login_request_id=" + std::string(100, 'x')}) {
    auto r = s->get("/oauth/login", query);
    BOOST_TEST(r.status == 400);
    check_page(r);
    BOOST_TEST(!r.header("Location"));
    BOOST_TEST(contains(r.body, "This sign-in link has expired; return to the application"));
  }
  auto lr = s->login_request();
  s->now += 601;
  BOOST_TEST(s->get("/oauth/login", "login_request_id=" + lr.first).status == 400);
  BOOST_TEST(s->get("/oauth/consent", "login_request_id=" + lr.first).status == 400);
}

BOOST_AUTO_TEST_CASE(code_sign_in_then_consent) {
  auto s = stack();
  testing::LoginRequestSeed seed;
  seed.login_hint = "hint@example.com";
  seed.redirect_uri = "http://127.0.0.1:4567/callback";
  auto lr = s->login_request(seed);

  auto login = s->get("/oauth/login", "login_request_id=" + lr.first);
  BOOST_TEST(login.status == 200);
  check_page(login);
  BOOST_TEST(contains(login.body, "value=\"hint@example.com\""));
  BOOST_TEST(contains(login.body, "Double Server"));

  // CSRF: a wrong token, or a post the browser flags as cross-site, is refused.
  std::string email = unique_email();
  auto forged = s->post("/oauth/login/email",
                        {{"login_request_id", lr.first}, {"csrf", "x"}, {"email", email}});
  BOOST_TEST(forged.status == 403);
  check_page(forged);
  auto cross = s->post("/oauth/login/email",
                       {{"login_request_id", lr.first}, {"csrf", lr.second}, {"email", email}}, "",
                       "cross-site");
  BOOST_TEST(cross.status == 403);
  BOOST_TEST(s->mailer->sent.empty());

  auto bad =
      s->post("/oauth/login/email",
              {{"login_request_id", lr.first}, {"csrf", lr.second}, {"email", "not an <address>"}});
  BOOST_TEST(bad.status == 400);
  BOOST_TEST(contains(bad.body, "role=\"alert\""));
  BOOST_TEST(contains(bad.body, "value=\"not an &lt;address&gt;\""));

  auto mail = s->send_code(lr, email);
  BOOST_TEST(mail.to == email);
  BOOST_TEST(mail.code.size() == 6u);
  BOOST_TEST(mail.link.rfind("http://127.0.0.1:8080/oauth/login/link?token=", 0) == 0u);
  BOOST_TEST(contains(mail.text, mail.code));

  auto code_page = s->get("/oauth/login/code", "login_request_id=" + lr.first);
  BOOST_TEST(code_page.status == 200);
  check_page(code_page);
  BOOST_TEST(contains(code_page.body, email));
  // The code POST may end at the client: its origin is an allowed form target.
  BOOST_TEST(contains(code_page.header("Content-Security-Policy").value_or(""),
                      "form-action 'self' http://127.0.0.1:4567;"));

  std::string wrong = mail.code == "000000" ? "111111" : "000000";
  auto miss = s->post("/oauth/login/code",
                      {{"login_request_id", lr.first}, {"csrf", lr.second}, {"code", wrong}});
  BOOST_TEST(miss.status == 400);
  BOOST_TEST(contains(miss.body, "4 attempts left"));
  BOOST_TEST(s->events("user.login.failed", lr.first) == 1);

  auto hit = s->post("/oauth/login/code",
                     {{"login_request_id", lr.first}, {"csrf", lr.second}, {"code", mail.code}});
  BOOST_REQUIRE_MESSAGE(hit.status == 303, hit.body);
  BOOST_TEST(hit.header("Location").value_or("") == "/oauth/consent?login_request_id=" + lr.first);
  std::string set_cookie = hit.header("Set-Cookie").value_or("");
  BOOST_TEST(set_cookie.rfind("portcullis_session=", 0) == 0u);
  BOOST_TEST(contains(set_cookie, "HttpOnly; SameSite=Lax"));
  BOOST_TEST(s->events("user.login.succeeded", lr.first) == 1);
  // The code was used: a replay finds nothing.
  auto replay = s->post("/oauth/login/code",
                        {{"login_request_id", lr.first}, {"csrf", lr.second}, {"code", mail.code}});
  BOOST_TEST(replay.status == 400);
  BOOST_TEST(contains(replay.body, "expired or was already used"));
  // Events never carry the code.
  auto leaked =
      s->db.query("SELECT COUNT(*) FROM events WHERE data LIKE ?", {"%" + mail.code + "%"});
  BOOST_TEST((*leaked)[0].i64(0) == 0);

  std::string cookie = cookie_pair(set_cookie);
  // Consent: only with the session of the user who signed in.
  auto no_session = s->get("/oauth/consent", "login_request_id=" + lr.first);
  BOOST_TEST(no_session.status == 303);
  auto consent = s->get("/oauth/consent", "login_request_id=" + lr.first, cookie);
  BOOST_REQUIRE_MESSAGE(consent.status == 200, consent.body);
  check_page(consent);
  BOOST_TEST(contains(consent.body, "Double Client"));
  BOOST_TEST(contains(consent.body, "Read your notes"));
  BOOST_TEST(contains(consent.body, "127.0.0.1"));
  BOOST_TEST(contains(consent.body, email));
  BOOST_TEST(contains(consent.header("Content-Security-Policy").value_or(""),
                      "form-action 'self' http://127.0.0.1:4567;"));

  auto undecided =
      s->post("/oauth/consent", {{"login_request_id", lr.first}, {"csrf", lr.second}}, cookie);
  BOOST_TEST(undecided.status == 400);
  auto stranger =
      s->post("/oauth/consent",
              {{"login_request_id", lr.first}, {"csrf", lr.second}, {"decision", "allow"}});
  BOOST_TEST(stranger.status == 403);
  auto forged_consent =
      s->post("/oauth/consent",
              {{"login_request_id", lr.first}, {"csrf", "x"}, {"decision", "allow"}}, cookie);
  BOOST_TEST(forged_consent.status == 403);
  BOOST_TEST(s->flow.finished == 0);

  auto allowed =
      s->post("/oauth/consent",
              {{"login_request_id", lr.first}, {"csrf", lr.second}, {"decision", "allow"}}, cookie);
  BOOST_TEST(allowed.status == 303);
  BOOST_TEST(
      allowed.header("Location").value_or("").rfind("http://127.0.0.1:4567/callback?code=", 0) ==
      0u);
  BOOST_TEST(s->flow.finished == 1);
  BOOST_TEST(s->flow.last_allow);
  // The request is complete now: its pages are gone.
  BOOST_TEST(s->get("/oauth/consent", "login_request_id=" + lr.first, cookie).status == 400);
}

BOOST_AUTO_TEST_CASE(five_wrong_codes_kill_the_code_and_codes_expire) {
  auto s = stack();
  auto lr = s->login_request();
  std::string email = unique_email();
  auto mail = s->send_code(lr, email);
  std::string wrong = mail.code == "000000" ? "111111" : "000000";
  for (int i = 0; i < 4; ++i) {
    BOOST_TEST(s->post("/oauth/login/code",
                       {{"login_request_id", lr.first}, {"csrf", lr.second}, {"code", wrong}})
                   .status == 400);
  }
  auto locked = s->post("/oauth/login/code",
                        {{"login_request_id", lr.first}, {"csrf", lr.second}, {"code", wrong}});
  BOOST_TEST(locked.status == 400);
  BOOST_TEST(contains(locked.body, "Too many wrong codes"));
  BOOST_TEST(contains(locked.body, "name=\"email\""));  // back on the first page, prefilled
  auto dead = s->post("/oauth/login/code",
                      {{"login_request_id", lr.first}, {"csrf", lr.second}, {"code", mail.code}});
  BOOST_TEST(dead.status == 400);
  BOOST_TEST(!dead.header("Set-Cookie"));
  BOOST_TEST(s->get("/oauth/login/code", "login_request_id=" + lr.first).status == 303);

  // A fresh code, typed after its ten minutes (the login request itself lives on here).
  auto lr2 = s->login_request([] {
    testing::LoginRequestSeed seed;
    seed.expires_at = unix_now() + 3600;
    return seed;
  }());
  auto late = s->send_code(lr2, email);
  s->now += 601;
  auto expired =
      s->post("/oauth/login/code",
              {{"login_request_id", lr2.first}, {"csrf", lr2.second}, {"code", late.code}});
  BOOST_TEST(expired.status == 400);
  BOOST_TEST(!expired.header("Set-Cookie"));
}

BOOST_AUTO_TEST_CASE(the_emailed_link_signs_in_once_after_a_click) {
  auto s = stack();
  auto lr = s->login_request();
  auto mail = s->send_code(lr, unique_email());
  std::string token = mail.link.substr(mail.link.find("token=") + 6);

  // GET only shows a button: a mail scanner fetching the link uses nothing up.
  auto page = s->get("/oauth/login/link", "token=" + token);
  BOOST_TEST(page.status == 200);
  check_page(page);
  BOOST_TEST(contains(page.body, mail.to));
  BOOST_TEST(s->get("/oauth/login/link", "token=" + token).status == 200);

  BOOST_TEST(s->post("/oauth/login/link", {{"token", token}, {"csrf", "x"}}).status == 403);
  auto used = s->post("/oauth/login/link", {{"token", token}, {"csrf", lr.second}});
  BOOST_REQUIRE_MESSAGE(used.status == 303, used.body);
  BOOST_TEST(used.header("Location").value_or("") == "/oauth/consent?login_request_id=" + lr.first);
  BOOST_TEST(used.header("Set-Cookie").has_value());
  auto again = s->post("/oauth/login/link", {{"token", token}, {"csrf", lr.second}});
  BOOST_TEST(again.status == 400);
  BOOST_TEST(contains(again.body, "expired or was already used"));
  BOOST_TEST(s->get("/oauth/login/link", "token=" + token).status == 400);
  BOOST_TEST(s->get("/oauth/login/link", "token=bogus").status == 400);
}

BOOST_AUTO_TEST_CASE(rate_limits_answer_a_friendly_429) {
  auto s = stack([](config::Config& c) { c.rate_limits.signin_codes_per_minute_per_ip = 1000; });
  auto lr = s->login_request();
  std::string email = unique_email();
  for (int i = 0; i < 5; ++i) s->send_code(lr, email);
  auto refused = s->post("/oauth/login/email",
                         {{"login_request_id", lr.first}, {"csrf", lr.second}, {"email", email}});
  BOOST_TEST(refused.status == 429);
  check_page(refused);
  BOOST_TEST(std::stoi(refused.header("Retry-After").value_or("0")) > 0);
  BOOST_TEST(contains(refused.body, "Too many codes requested"));
  BOOST_TEST(s->mailer->sent.size() == 5u);
  // Case does not make a new address.
  auto upper = email;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  BOOST_TEST(s->post("/oauth/login/email",
                     {{"login_request_id", lr.first}, {"csrf", lr.second}, {"email", upper}})
                 .status == 429);
  // Another address from the same network is still fine...
  s->send_code(lr, unique_email());

  // ...until the per-network limit.
  auto t = stack([](config::Config& c) { c.rate_limits.signin_codes_per_minute_per_ip = 2; });
  auto lr2 = t->login_request();
  t->send_code(lr2, unique_email());
  t->send_code(lr2, unique_email());
  auto by_ip =
      t->post("/oauth/login/email",
              {{"login_request_id", lr2.first}, {"csrf", lr2.second}, {"email", unique_email()}});
  BOOST_TEST(by_ip.status == 429);
  BOOST_TEST(t->events("user.login.failed", lr2.first) == 1);
}

BOOST_AUTO_TEST_CASE(deactivated_users_and_mail_failures) {
  auto s = stack();
  std::string email = unique_email();
  BOOST_REQUIRE(s->db
                    .execute("INSERT INTO users (id, email, email_verified, active, metadata, "
                             "create_time, update_time) VALUES (?, ?, TRUE, FALSE, '{}', NOW(6), "
                             "NOW(6))",
                             {new_id("usr_"), email})
                    .is_ok());
  auto lr = s->login_request();
  auto mail = s->send_code(lr, email);
  auto refused =
      s->post("/oauth/login/code",
              {{"login_request_id", lr.first}, {"csrf", lr.second}, {"code", mail.code}});
  BOOST_TEST(refused.status == 403);
  BOOST_TEST(contains(refused.body, "deactivated"));
  BOOST_TEST(!refused.header("Set-Cookie"));
  BOOST_TEST(s->events("user.login.failed", lr.first) == 1);

  s->mailer->fail = true;
  auto lr2 = s->login_request();
  auto down =
      s->post("/oauth/login/email",
              {{"login_request_id", lr2.first}, {"csrf", lr2.second}, {"email", unique_email()}});
  BOOST_TEST(down.status == 503);
  check_page(down);
  BOOST_TEST(down.header("Retry-After").has_value());
  // The code that never left is dead.
  BOOST_TEST(s->get("/oauth/login/code", "login_request_id=" + lr2.first).status == 303);
}

// The rules of lib/oauth/signin_organization.h, pure.
BOOST_AUTO_TEST_CASE(the_organization_a_sign_in_went_through) {
  using oauth::signin_organization;
  // The organization that proved the user wins, whatever the request named.
  BOOST_TEST(signin_organization("org_a", "", "") == "org_a");
  BOOST_TEST(signin_organization("org_a", "org_b", "active") == "org_a");
  // A named organization only with an active membership: a hint is the client's choice.
  BOOST_TEST(signin_organization("", "org_b", "active") == "org_b");
  for (const char* status : {"", "inactive", "pending"}) {
    BOOST_TEST(signin_organization("", "org_b", status) == "", status);
  }
  BOOST_TEST(signin_organization("", "", "active") == "");

  // A session serves a request naming no organization, or its own; another one signs in again.
  BOOST_TEST(oauth::session_serves("org_a", ""));
  BOOST_TEST(oauth::session_serves("org_a", "org_a"));
  BOOST_TEST(oauth::session_serves("", ""));
  BOOST_TEST(!oauth::session_serves("org_a", "org_b"));
  BOOST_TEST(!oauth::session_serves("", "org_b"));
}
