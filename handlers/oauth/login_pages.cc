// The first sign-in page and the e-mail step.
#include "crypto/base64.h"
#include "crypto/hash.h"
#include "custom_login/login_settings.h"
#include "custom_login/method_policy.h"
#include "identity/email_address.h"
#include "identity/email_challenges.h"
#include "mail/message.h"
#include "pages/error_page.h"
#include "pages/signin_views.h"
#include "ratelimit/limiter.h"
#include "signin_handlers.h"
#include "social/connection_store.h"
#include "sso/realm.h"

namespace portcullis::oauth_worker {
namespace {

constexpr int kEmailWindowSeconds = 600;
constexpr int kIpWindowSeconds = 60;

std::string social_start(const oauth::LoginRequest& login, const std::string& connection_id) {
  return "/sso/social/start?login_request_id=" + http::url_encode(login.id) +
         "&connection_id=" + http::url_encode(connection_id);
}

std::string custom_start(const oauth::LoginRequest& login) {
  return "/oauth/login/custom?login_request_id=" + http::url_encode(login.id);
}

// "Continue with your account at example.com": the host of the customer's login URL.
std::string custom_label(const std::string& url) {
  auto start = url.find("://");
  if (start == std::string::npos) return "Continue with your account";
  start += 3;
  auto end = url.find_first_of(":/?", start);
  return "Continue with your account at " + url.substr(start, end - start);
}

// The first page: the e-mail form (which also finds an organization's SSO by the address's
// domain), with the methods the environment allows above it in a fixed order: custom
// authentication (the customer's own accounts), then the social connections.
Result<pages::LoginView> login_view(server::Context& ctx, oauth::LoginFlow& flow,
                                    const oauth::LoginRequest& login,
                                    const custom_login::LoginSettings& settings) {
  pages::LoginView v;
  v.login_request_id = login.id;
  v.csrf_token = login.csrf_token;
  if (auto screen = flow.describe_consent(login)) {
    v.resource_name = screen->resource_name;
    v.client_name = screen->client_name;
  }
  v.email = login.login_hint;
  if (settings.custom_enabled()) {
    v.methods.push_back(
        pages::SignInMethod{custom_label(settings.custom_login_url), custom_start(login)});
  }
  if (!settings.allows("social")) return v;
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::vector<social::SocialConnection> socials,
      social::SocialConnectionStore(ctx.services.db, ctx.services.master_key).enabled());
  for (const auto& c : socials) {
    v.methods.push_back(pages::SignInMethod{"Continue with " + c.name, social_start(login, c.id)});
  }
  return v;
}

// Contract §0: 5 codes per 10 minutes per address, 60 a minute per source address. Both are
// counted for every request. An address is bucketed by its hash: the counters table is no
// place for personal data.
Result<ratelimit::Decision> code_allowance(server::Context& ctx, const std::string& email,
                                           int64_t now) {
  ratelimit::Limiter limiter(ctx.services.db);
  const auto& limits = ctx.services.config.rate_limits;
  PORTCULLIS_ASSIGN_OR_RETURN(
      ratelimit::Decision by_ip,
      limiter.hit("signin:ip:" + ctx.request.remote_addr, limits.signin_codes_per_minute_per_ip,
                  kIpWindowSeconds, now));
  std::string email_bucket =
      "signin:email:" + crypto::base64url_encode(crypto::sha256(identity::email_key(email)));
  PORTCULLIS_ASSIGN_OR_RETURN(
      ratelimit::Decision by_email,
      limiter.hit(email_bucket, limits.signin_codes_per_10_minutes_per_email, kEmailWindowSeconds,
                  now));
  if (!by_ip.allowed) return by_ip;
  return by_email;
}

// Home-realm discovery (contract §10): when the hints or the address lead to an organization
// with an active SSO connection, the browser goes to its identity provider (handlers/sso)
// instead of getting a code. nullopt: the e-mail code serves. A GET is answered with a 303; the
// e-mail form's POST with a page that navigates on (pages::continue_to_idp_page says why).
Result<std::optional<http::Response>> to_identity_provider(server::Context& ctx,
                                                           const oauth::LoginRequest& login,
                                                           const std::string& email,
                                                           bool from_form) {
  sso::RealmHints hints{login.connection_id, login.organization_id, login.domain_hint, email};
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<sso::Connection> connection,
                              sso::find_realm(ctx.services.db, ctx.services.master_key, hints));
  if (!connection) return std::optional<http::Response>();
  std::string query = "login_request_id=" + http::url_encode(login.id) +
                      "&connection_id=" + http::url_encode(connection->id);
  if (!email.empty()) query += "&login_hint=" + http::url_encode(email);
  return std::optional<http::Response>(from_form
                                           ? pages::continue_to_idp_page(query)
                                           : http::Response::see_other("/sso/start?" + query));
}

// The methods this sign-in may offer: the environment's, narrowed to those of the
// organization the request names (custom_login/method_policy.h).
Result<custom_login::LoginSettings> offered_methods(server::Context& ctx,
                                                    const oauth::LoginRequest& login) {
  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::LoginSettings environment,
                              custom_login::LoginSettingsStore(ctx.services.db).get());
  return custom_login::narrowed_to(ctx.services.db, std::move(environment), login.organization_id);
}

}  // namespace

Result<http::Response> show_login(server::Context& ctx, SigninDeps& deps) {
  oauth::LoginFlow& flow = deps.flow(ctx.services);
  PORTCULLIS_ASSIGN_OR_RETURN(
      oauth::LoginRequest login,
      load_login_request(flow, ctx.request.query.get_or("login_request_id", ""), deps.clock()));
  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::LoginSettings settings, offered_methods(ctx, login));
  // After a failed SSO attempt the page links back here with sso=0: the e-mail form, no loop.
  if (ctx.request.query.get_or("sso", "") != "0") {
    // Custom authentication as the only method: straight to the customer's login page.
    if (settings.custom_enabled() && settings.login_methods.size() == 1) {
      return http::Response::see_other(custom_start(login));
    }
    // connection_id=soc_… on /oauth/authorize (contract §10): straight to that provider.
    if (login.connection_id.rfind("soc_", 0) == 0 && settings.allows("social")) {
      auto c = social::SocialConnectionStore(ctx.services.db, ctx.services.master_key)
                   .get(login.connection_id);
      if (c && c->enabled) return http::Response::see_other(social_start(login, c->id));
    }
    if (settings.allows("sso")) {
      PORTCULLIS_ASSIGN_OR_RETURN(auto idp,
                                  to_identity_provider(ctx, login, login.login_hint, false));
      if (idp) return std::move(*idp);
    }
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::LoginView view, login_view(ctx, flow, login, settings));
  return pages::login_page(200, view);
}

Result<http::Response> send_code(server::Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  oauth::LoginFlow& flow = deps.flow(ctx.services);
  PORTCULLIS_ASSIGN_OR_RETURN(PostedForm posted, read_login_form(ctx, flow, now));
  const http::Form& form = posted.form;
  const oauth::LoginRequest& login = posted.login;

  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::LoginSettings settings, offered_methods(ctx, login));
  std::string typed = form.get_or("email", "");
  auto email = identity::normalize_email(typed);
  if (!email) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::LoginView v, login_view(ctx, flow, login, settings));
    v.email = typed;
    v.error = email.status().message();
    return pages::login_page(400, v);
  }
  if (settings.allows("sso")) {
    PORTCULLIS_ASSIGN_OR_RETURN(auto idp, to_identity_provider(ctx, login, *email, true));
    if (idp) return std::move(*idp);
  }
  // The environment, the organization the request names and the one whose verified domain
  // holds the address must all allow e-mailed codes: an organization that asks for SSO is not
  // bypassed while its connection is inactive.
  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::MethodDecision by_email,
                              custom_login::check_method(ctx.services.db, settings, "email", *email,
                                                         {login.organization_id}));
  if (!by_email.allowed) {
    // The form stays (contract §12: it finds an organization's SSO); codes are not sent.
    PORTCULLIS_ASSIGN_OR_RETURN(pages::LoginView v, login_view(ctx, flow, login, settings));
    v.email = typed;
    v.error = by_email.organization_id.empty()
                  ? "Signing in with an e-mailed code is not offered here. Use another way below."
                  : "Your organization does not allow signing in with an e-mailed code. Sign in "
                    "the way your organization asks, or contact your administrator.";
    record_login_failure(ctx, login,
                         by_email.organization_id.empty() ? "email_disabled" : by_email.reason,
                         *email, by_email.organization_id);
    return pages::login_page(403, v);
  }
  PORTCULLIS_ASSIGN_OR_RETURN(ratelimit::Decision allowance, code_allowance(ctx, *email, now));
  if (!allowance.allowed) {
    record_login_failure(ctx, login, "rate_limited", *email);
    return pages::too_many_codes_page(login.id, allowance.retry_after_seconds);
  }

  identity::EmailChallenges challenges(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(identity::NewChallenge fresh,
                              challenges.start(login.id, *email, now));
  std::string link = ctx.services.config.base_url +
                     "/oauth/login/link?token=" + http::url_encode(fresh.link_token);
  mail::SignInMail message =
      mail::compose_signin_mail(*email, fresh.code, link, resource_name(flow, login),
                                identity::kChallengeLifetimeSeconds / 60);
  if (Status sent = deps.mailer->send(message, now); !sent.is_ok()) {
    (void)challenges.discard(fresh.id, now);
    http::Response r = pages::error_page(
        503, "We could not send the e-mail",
        "Sending the sign-in e-mail failed. Wait a moment, then try again.", login.id, "Try again");
    r.set_header("Retry-After", "30");
    return r;
  }
  return http::Response::see_other("/oauth/login/code?login_request_id=" +
                                   http::url_encode(login.id));
}

}  // namespace portcullis::oauth_worker
