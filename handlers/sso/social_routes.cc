#include "social_routes.h"

#include "custom_login/login_settings.h"
#include "pages/error_page.h"
#include "social/connection_store.h"
#include "social/linking.h"
#include "social/provider_client.h"
#include "sso/sso_requests.h"
#include "sso_support.h"

namespace portcullis::sso_worker {
namespace {

using oauth_worker::SigninDeps;
using server::Context;

constexpr const char* kMethod = "social";

std::string callback_uri(const Context& ctx) {
  return ctx.services.config.base_url + "/sso/social/callback";
}

http::Response refuse_social(Context& ctx, const oauth::LoginRequest* login,
                             const std::string& connection_id, const std::string& reason,
                             const std::string& detail) {
  return refuse(ctx, login, connection_id, "", reason, detail, kMethod);
}

Result<http::Response> start(Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::LoginRequest login,
                              oauth_worker::query_login_request(ctx, deps, now));
  const std::string connection_id = ctx.request.query.get_or("connection_id", "");
  social::SocialConnectionStore connections(ctx.services.db, ctx.services.master_key);
  auto connection = connections.get(connection_id);
  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::LoginSettings settings,
                              custom_login::LoginSettingsStore(ctx.services.db).get());
  if (!connection || !connection->enabled || !settings.allows("social")) {
    return refuse_social(ctx, &login, connection_id, "connection_inactive",
                         "no enabled social connection");
  }
  const std::string browser = browser_secret_or_new(ctx.request);
  PORTCULLIS_ASSIGN_OR_RETURN(sso::PendingSignIn pending,
                              sso::SsoRequestStore(ctx.services.db, ctx.services.master_key)
                                  .start(connection->id, login.id, browser, now));
  sso::AuthorizationParams params{callback_uri(ctx), pending.state, pending.nonce,
                                  sso::s256_challenge(pending.code_verifier), login.login_hint};
  auto url =
      social::ProviderClient(*connection, "", outbound_options(ctx)).authorization_url(params, now);
  if (!url) {
    return refuse_social(ctx, &login, connection->id, "discovery_failed", url.status().message());
  }
  return to_identity_provider(ctx, *url, browser);
}

Result<http::Response> callback(Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  const http::Form& q = ctx.request.query;
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<sso::PendingSignIn> pending,
                              sso::SsoRequestStore(ctx.services.db, ctx.services.master_key)
                                  .take(q.get_or("state", ""), browser_secret(ctx.request), now));
  if (!pending) {
    return refuse_social(ctx, nullptr, "", "unknown_state", "no live sign-in has this state");
  }
  auto login =
      oauth_worker::load_login_request(deps.flow(ctx.services), pending->login_request_id, now);
  if (!login) return pages::expired_login_page();
  if (!pending->browser_matches) {
    return refuse_social(ctx, &*login, pending->connection_id, "state_other_browser",
                         "the state belongs to another browser");
  }
  social::SocialConnectionStore connections(ctx.services.db, ctx.services.master_key);
  auto connection = connections.get(pending->connection_id);
  if (!connection || !connection->enabled) {
    return refuse_social(ctx, &*login, pending->connection_id, "connection_inactive",
                         "the connection is gone or disabled");
  }
  if (auto error = q.get("error")) {
    return refuse_social(ctx, &*login, connection->id, "idp_error", error->substr(0, 64));
  }
  const std::string code = q.get_or("code", "");
  if (code.empty()) return refuse_social(ctx, &*login, connection->id, "idp_error", "no code");
  PORTCULLIS_ASSIGN_OR_RETURN(std::string secret, connections.client_secret(*connection));
  sso::OidcFailure failure;
  auto profile =
      social::ProviderClient(*connection, std::move(secret), outbound_options(ctx))
          .finish(code, pending->code_verifier, callback_uri(ctx), pending->nonce, now, failure);
  if (!profile || !failure.reason.empty()) {
    return refuse_social(ctx, &*login, connection->id,
                         failure.reason.empty() ? "idp_error" : failure.reason,
                         failure.detail.empty() ? profile.status().message() : failure.detail);
  }
  social::AccountClaim claim{
      identity::Identity{social::identity_realm(*connection), profile->subject,
                         connection->provider, connection->id, ""},
      profile->email, profile->email_verified, profile->given_name, profile->family_name};
  std::string reason;
  auto user = social::link_account(ctx.services.db, claim, reason);
  if (!user) {
    if (reason.empty()) return user.status();
    return refuse_social(ctx, &*login, connection->id, reason, user.status().message());
  }
  Json::Value data(Json::objectValue);
  data["connection_id"] = connection->id;
  data["provider"] = connection->provider;
  return oauth_worker::complete_sign_in_as(ctx, deps, *login, *user, kMethod, now, data);
}

}  // namespace

void install_social_routes(server::App& app, std::shared_ptr<SigninDeps> deps) {
  app.add("GET", "/sso/social/start", oauth_worker::page_route(deps, start));
  app.add("GET", "/sso/social/callback", oauth_worker::page_route(deps, callback));
}

}  // namespace portcullis::sso_worker
