#include "sso_support.h"

#include "crypto/random.h"
#include "log/log.h"
#include "pages/error_page.h"
#include "sso/connection_store.h"

namespace portcullis::sso_worker {
namespace {

constexpr const char* kCookie = "portcullis_sso";
constexpr size_t kMaxBrowserSecret = 64;

}  // namespace

std::string browser_secret(const http::Request& request) {
  auto value = request.cookie(kCookie);
  if (!value || value->empty() || value->size() > kMaxBrowserSecret) return "";
  return *value;
}

std::string browser_cookie(const server::Context& ctx, const std::string& value) {
  std::string c = std::string(kCookie) + "=" + value +
                  "; Path=/sso/; Max-Age=" + std::to_string(sso::kSsoRequestLifetimeSeconds) +
                  "; HttpOnly; SameSite=Lax";
  if (ctx.services.config.base_url.rfind("https://", 0) == 0) c += "; Secure";
  return c;
}

std::string browser_secret_or_new(const http::Request& request) {
  std::string browser = browser_secret(request);
  return browser.empty() ? crypto::random_token(24) : browser;
}

http::Response to_identity_provider(const server::Context& ctx, const std::string& url,
                                    const std::string& browser) {
  http::Response r = http::Response::see_other(url);
  r.headers.emplace_back("Set-Cookie", browser_cookie(ctx, browser));
  return r;
}

outbound::Options outbound_options(const config::Config& config) {
  outbound::Options o;
  o.allow_hosts = config.outbound_allow_hosts;
  o.ca_file = config.outbound_ca_file;
  return o;
}

outbound::Options outbound_options(const server::Context& ctx) {
  return outbound_options(ctx.services.config);
}

std::string oidc_redirect_uri(const server::Context& ctx) {
  return ctx.services.config.base_url + "/sso/oidc/callback";
}

http::Response refuse(server::Context& ctx, const oauth::LoginRequest* login,
                      const std::string& connection_id, const std::string& organization_id,
                      const std::string& reason, const std::string& detail,
                      const std::string& method) {
  events::Event e = login
                        ? oauth_worker::login_event(ctx, *login, events::type::kUserLoginFailed, "")
                        : ctx.event(events::type::kUserLoginFailed);
  e.organization_id = organization_id;
  e.data["method"] = method;
  e.data["reason"] = reason;
  if (!connection_id.empty()) e.data["connection_id"] = connection_id;
  ctx.events.add(std::move(e));
  log::info(method + " sign-in refused",
            {{"connection", connection_id}, {"reason", reason}, {"detail", detail}});
  const bool social = method == "social";
  const std::string title = social ? "Sign-in failed" : "Single sign-on failed";
  const std::string message =
      (social ? "Signing in with that account did not work ("
              : "Signing in through your organization's identity provider did not work (") +
      reason +
      (social ? "). Try again, or use another way to sign in."
              : "). Try again, or ask your administrator.");
  if (login) return pages::error_page(403, title, message, login->id, "Start again");
  return pages::error_page(403, title, message);
}

Result<ReturnedOrPage> take_returned(server::Context& ctx, oauth_worker::SigninDeps& deps,
                                     int64_t now) {
  ReturnedOrPage out;
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::optional<sso::PendingSignIn> pending,
      sso::SsoRequestStore(ctx.services.db, ctx.services.master_key)
          .take(ctx.request.query.get_or("state", ""), browser_secret(ctx.request), now));
  if (!pending) {
    out.page = refuse(ctx, nullptr, "", "", "unknown_state", "no live sign-in has this state");
    return out;
  }
  auto login =
      oauth_worker::load_login_request(deps.flow(ctx.services), pending->login_request_id, now);
  if (!login) {
    out.page = pages::expired_login_page();
    return out;
  }
  auto connection =
      sso::ConnectionStore(ctx.services.db, ctx.services.master_key).find(pending->connection_id);
  const std::string org = connection ? connection->organization_id : "";
  if (!pending->browser_matches) {
    out.page = refuse(ctx, &*login, pending->connection_id, org, "state_other_browser",
                      "the state belongs to another browser");
  } else if (!connection || connection->state != "active") {
    out.page = refuse(ctx, &*login, pending->connection_id, org, "connection_inactive",
                      "the connection is gone or inactive");
  } else {
    out.returned = Returned{std::move(*pending), std::move(*login), std::move(*connection)};
  }
  return out;
}

Result<http::Response> finish_sign_in(server::Context& ctx, oauth_worker::SigninDeps& deps,
                                      const oauth::LoginRequest& login,
                                      const sso::Connection& connection,
                                      const sso::AssertedUser& asserted, int64_t now) {
  std::string reason;
  auto user = sso::provision(ctx.services.db, connection, asserted, reason);
  if (!user) {
    if (reason.empty()) return user.status();
    return refuse(ctx, &login, connection.id, connection.organization_id, reason,
                  user.status().message());
  }
  Json::Value data(Json::objectValue);
  data["organization_id"] = connection.organization_id;
  data["connection_id"] = connection.id;
  data["connection_type"] = connection.type;
  return oauth_worker::complete_sign_in_as(ctx, deps, login, *user, "sso", now, data);
}

}  // namespace portcullis::sso_worker
