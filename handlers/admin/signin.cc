#include "signin.h"

#include "admin/portal_signin.h"
#include "admin/session_store.h"
#include "core/time.h"
#include "crypto/compare.h"
#include "identity/session_store.h"
#include "log/log.h"
#include "portal.h"

namespace portcullis::admin_worker {
namespace {

http::Response with_cookies(http::Response r, std::initializer_list<std::string> cookies) {
  for (const auto& c : cookies) r.headers.emplace_back("Set-Cookie", c);
  return r;
}

http::Response message_page(int status, std::string_view title, std::string_view message) {
  auto content = html(R"(<h1 id="page-title">{{title}}</h1>
<p>{{message}}</p>
<p><a class="button primary" href="/admin/login">Sign in</a></p>)",
                      {{"title", title}, {"message", message}});
  return bare_page(status, title, content ? *content : pages::Html::escape(title));
}

// An admin session for `user_id` when they administer something; the 403 page otherwise.
Result<http::Response> start_session(server::Context& ctx, const std::string& user_id,
                                     int64_t auth_time, const std::string& next,
                                     std::vector<std::string> cookies) {
  PORTCULLIS_ASSIGN_OR_RETURN(admin::Access access, admin::access_of(ctx.services.db, user_id));
  if (!access.allowed()) {
    auto content = html(R"(<h1 id="page-title">Not an administrator</h1>
<p>You signed in as <strong>{{email}}</strong>, who administers neither this environment nor an organization in it.</p>
<p>Ask an environment administrator to give you the <code>admin</code> role, or sign in with another account.</p>
<p><a class="button secondary" href="/admin/login?switch=1">Sign in with another account</a></p>)",
                        {{"email", access.user.email}});
    http::Response r = bare_page(403, "Not an administrator", content ? *content : pages::Html());
    for (auto& c : cookies) r.headers.emplace_back("Set-Cookie", std::move(c));
    return r;
  }
  admin::SessionStore sessions(ctx.services.db, ctx.services.config);
  PORTCULLIS_ASSIGN_OR_RETURN(std::string cookie,
                              sessions.create(user_id, auth_time, ctx.request, unix_now()));
  http::Response r = redirect(next);
  r.headers.emplace_back("Set-Cookie", std::move(cookie));
  for (auto& c : cookies) r.headers.emplace_back("Set-Cookie", std::move(c));
  log::info("admin session started", {{"user_id", user_id}});
  return r;
}

// GET /admin/login[?next=/admin/…][&switch=1]: a browser already signed in to the environment's
// login (and not asking to switch accounts) gets its portal session at once; any other goes
// through the login pages with every method the environment offers.
Result<http::Response> login(server::Context& ctx) {
  const int64_t now = unix_now();
  const std::string next = admin::safe_next(ctx.request.query.get_or("next", "/admin"));
  admin::SessionStore sessions(ctx.services.db, ctx.services.config);
  if (sessions.current(ctx.request, now)) return redirect(next);
  identity::SessionStore browser(ctx.services.db, ctx.services.config);
  if (!ctx.request.query.has("switch")) {
    if (auto signed_in = browser.current(ctx.request, now)) {
      return start_session(ctx, signed_in->user_id, signed_in->auth_time, next, {});
    }
  }
  PORTCULLIS_ASSIGN_OR_RETURN(admin::StartedLogin started,
                              admin::start_login(ctx.services.db, ctx.services.config, next, now));
  http::Response r = redirect(ctx.services.config.base_url + "/oauth/login?login_request_id=" +
                              http::url_encode(started.login_request_id));
  r.headers.emplace_back("Set-Cookie", started.cookie);
  // Switching accounts: the old browser session must not sign the next person in.
  if (ctx.request.query.has("switch")) {
    PORTCULLIS_RETURN_IF_ERROR(browser.end(ctx.request, now));
    r.headers.emplace_back("Set-Cookie", browser.clearing_cookie());
  }
  return r;
}

// GET /admin/callback?code&state (or ?error=…): the end of the login pages.
Result<http::Response> callback(server::Context& ctx) {
  const http::Form& q = ctx.request.query;
  const std::string clear = admin::clearing_login_cookie(ctx.services.config);
  if (q.has("error")) {
    return with_cookies(message_page(400, "Sign-in did not finish",
                                     "The sign-in was cancelled or refused. Sign in again."),
                        {clear});
  }
  auto signed_in = admin::redeem(ctx.services.db, ctx.services.config, ctx.request,
                                 q.get_or("code", ""), q.get_or("state", ""), unix_now());
  if (!signed_in) {
    if (signed_in.status().code() != Code::kPermissionDenied) return signed_in.status();
    log::warn("admin sign-in refused", {{"reason", signed_in.status().message()}});
    return with_cookies(message_page(400, "Sign-in did not finish",
                                     "This sign-in answer is not valid here (it was used "
                                     "already, expired, or began in another browser). Sign in "
                                     "again."),
                        {clear});
  }
  return start_session(ctx, signed_in->user_id, signed_in->auth_time, signed_in->next, {clear});
}

// POST /admin/logout: ends the portal session and the browser's sign-in session.
Result<http::Response> logout(server::Context& ctx) {
  const int64_t now = unix_now();
  admin::SessionStore sessions(ctx.services.db, ctx.services.config);
  auto session = sessions.current(ctx.request, now);
  auto form = ctx.request.form();
  auto csrf = form ? form->get("csrf") : std::nullopt;
  if (session && (!csrf || !crypto::constant_time_equals(*csrf, session->csrf_token))) {
    return message_page(403, "This form has expired",
                        "The sign-out form was not sent from this portal. You are still signed "
                        "in.");
  }
  identity::SessionStore browser(ctx.services.db, ctx.services.config);
  PORTCULLIS_RETURN_IF_ERROR(sessions.end(ctx.request, now));
  PORTCULLIS_RETURN_IF_ERROR(browser.end(ctx.request, now));
  return with_cookies(redirect("/admin/signed-out"),
                      {sessions.clearing_cookie(), browser.clearing_cookie()});
}

Result<http::Response> signed_out(server::Context&) {
  return message_page(200, "You are signed out",
                      "Your admin session has ended. Sign in again to continue.");
}

}  // namespace

void install_signin_routes(server::App& app) {
  app.add("GET", "/admin/login", server::Route{.handler = login});
  app.add("GET", "/admin/callback", server::Route{.handler = callback});
  app.add("POST", "/admin/logout", server::Route{.handler = logout});
  app.add("GET", "/admin/signed-out", server::Route{.handler = signed_out});
}

}  // namespace portcullis::admin_worker
