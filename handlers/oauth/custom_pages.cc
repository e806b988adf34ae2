// Custom authentication (contract §10, docs/login.md): the login page hands the sign-in to the
// customer's login URL, and takes it back once the customer's backend completed it.
//
//   GET /oauth/login/custom?login_request_id=…  (the login page's button, or straight from
//     /oauth/login when custom is the only method) ──303 + cookie──► {custom_login_url}
//     ?login_request_id=<a new id for the customer>
//   customer backend ── POST /api/v1/login_requests/{id}/complete (handlers/api)
//   GET /oauth/login/continue?login_request_id=… ── this browser's, completed, unused, within
//     10 minutes ──► the same finish as every sign-in method
#include <optional>

#include "core/time.h"
#include "crypto/random.h"
#include "custom_login/custom_logins.h"
#include "custom_login/login_settings.h"
#include "identity/email_address.h"
#include "log/log.h"
#include "organizations/membership_store.h"
#include "pages/error_page.h"
#include "signin_handlers.h"
#include "social/linking.h"

namespace portcullis::oauth_worker {
namespace {

constexpr const char* kCookie = "portcullis_custom_login";
constexpr size_t kMaxBrowserSecret = 64;

std::string browser_secret(const http::Request& request) {
  auto value = request.cookie(kCookie);
  if (!value || value->empty() || value->size() > kMaxBrowserSecret) return "";
  return *value;
}

// Path=/oauth/login/ (the continue endpoint reads it), HttpOnly, SameSite=Lax (the customer's
// redirect back is a top-level GET), Secure on https, as long as a custom sign-in lives.
std::string browser_cookie(const server::Context& ctx, const std::string& value) {
  std::string c = std::string(kCookie) + "=" + value + "; Path=/oauth/login/; Max-Age=" +
                  std::to_string(custom_login::kCustomLoginLifetimeSeconds) +
                  "; HttpOnly; SameSite=Lax";
  if (ctx.services.config.base_url.rfind("https://", 0) == 0) c += "; Secure";
  return c;
}

http::Response refuse(server::Context& ctx, const oauth::LoginRequest* login,
                      const std::string& reason, int status, const std::string& message) {
  events::Event e = login ? login_event(ctx, *login, events::type::kUserLoginFailed, "")
                          : ctx.event(events::type::kUserLoginFailed);
  e.data["method"] = "custom";
  e.data["reason"] = reason;
  ctx.events.add(std::move(e));
  log::info("custom sign-in refused", {{"reason", reason}});
  if (login) return pages::error_page(status, "Sign-in failed", message, login->id, "Start again");
  return pages::error_page(status, "Sign-in failed", message);
}

std::string text(const Json::Value& user, const char* key) {
  return user.isObject() && user[key].isString() ? user[key].asString() : std::string();
}

// The membership of the organization the customer named: created when missing (provisioned
// by the API, as the customer's backend is an API client); a deactivated one refuses.
Result<bool> join(store::Db& db, const std::string& organization_id, const std::string& user_id) {
  organizations::MembershipStore memberships(db);
  PORTCULLIS_ASSIGN_OR_RETURN(auto of_user, memberships.of_users({user_id}));
  for (const auto& m : of_user[user_id]) {
    if (m.organization_id == organization_id) return m.status != "inactive";
  }
  PORTCULLIS_RETURN_IF_ERROR(
      memberships.put(organization_id, user_id, organizations::MembershipFields{}, "api").status());
  return true;
}

}  // namespace

Result<http::Response> start_custom(server::Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::LoginRequest login, query_login_request(ctx, deps, now));
  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::LoginSettings settings,
                              custom_login::LoginSettingsStore(ctx.services.db).get());
  if (!settings.custom_enabled()) {
    return refuse(ctx, &login, "custom_disabled", 404, "This sign-in method is not offered here.");
  }
  std::string browser = browser_secret(ctx.request);
  if (browser.empty()) browser = crypto::random_token(24);
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::string id,
      custom_login::CustomLoginStore(ctx.services.db).start(login.id, browser, now));
  std::string target = settings.custom_login_url;
  target += target.find('?') == std::string::npos ? '?' : '&';
  target += "login_request_id=" + http::url_encode(id);
  http::Response r = http::Response::see_other(target);
  r.headers.emplace_back("Set-Cookie", browser_cookie(ctx, browser));
  return r;
}

Result<http::Response> continue_custom(server::Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::Taken taken,
                              custom_login::CustomLoginStore(ctx.services.db)
                                  .take(ctx.request.query.get_or("login_request_id", ""),
                                        browser_secret(ctx.request), now));
  using custom_login::Outcome;
  if (taken.outcome == Outcome::kUnknown) {
    return refuse(ctx, nullptr, "unknown_login_request", 404,
                  "This sign-in link is not valid. Start again from the application.");
  }
  auto login = load_login_request(deps.flow(ctx.services), taken.login_request_id, now);
  const oauth::LoginRequest* l = login ? &*login : nullptr;
  switch (taken.outcome) {
    case Outcome::kExpired:
      return refuse(ctx, l, "login_request_expired", 410,
                    "This sign-in took longer than 10 minutes. Start again.");
    case Outcome::kUsed:
      return refuse(ctx, l, "login_request_used", 410,
                    "This sign-in was used already. Start again.");
    case Outcome::kOtherBrowser:
      return refuse(ctx, l, "other_browser", 403,
                    "This sign-in was started in another browser. Start again here.");
    case Outcome::kNotCompleted:
      return refuse(ctx, l, "not_completed", 409, "The sign-in was not finished. Start again.");
    default:
      break;
  }
  if (!login) return pages::expired_login_page();
  const Json::Value& u = taken.user;
  const std::string external_id = text(u, "external_id");
  social::AccountClaim claim{
      identity::Identity{"custom", external_id, "custom", "", ""}, text(u, "email"),
      u.isObject() && u["email_verified"].isBool() && u["email_verified"].asBool(),
      text(u, "given_name"), text(u, "family_name")};
  // The user the customer's account id links to (already known: signed in as, not looked up
  // again by address), or, without an account id, the verified address alone.
  std::optional<identity::User> linked;
  std::string email;
  if (!external_id.empty()) {
    std::string reason;
    auto user = social::link_account(ctx.services.db, claim, reason);
    if (!user) {
      if (reason.empty()) return user.status();
      return refuse(ctx, &*login, reason, 403,
                    "This account cannot sign in here (" + reason + ").");
    }
    linked = std::move(user).value();
    email = linked->email;
  } else if (!claim.email_verified) {
    // Without an account id to link, only a verified address can name the user.
    return refuse(ctx, &*login, "email_not_verified", 403,
                  "This account cannot sign in here (email_not_verified).");
  } else {
    email = claim.email;
  }
  Json::Value data(Json::objectValue);
  if (const std::string org = text(u, "organization_id"); !org.empty()) {
    std::string user_id;
    if (linked) {
      user_id = linked->id;
    } else {
      auto normalized = identity::normalize_email(email);
      if (!normalized) return refuse(ctx, &*login, "email_missing", 403, "No usable address.");
      auto user =
          identity::UserStore(ctx.services.db).find_or_create_by_verified_email(*normalized);
      if (!user) return user.status();
      user_id = user->id;
    }
    PORTCULLIS_ASSIGN_OR_RETURN(bool member, join(ctx.services.db, org, user_id));
    if (!member) {
      return refuse(ctx, &*login, "membership_inactive", 403,
                    "Your membership of this organization is deactivated.");
    }
    data["organization_id"] = org;
  }
  if (linked) return complete_sign_in_as(ctx, deps, *login, *linked, "custom", now, data);
  return complete_sign_in(ctx, deps, *login, email, "custom", now, data);
}

}  // namespace portcullis::oauth_worker
