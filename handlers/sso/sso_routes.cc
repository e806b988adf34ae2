#include "sso_routes.h"

#include <chrono>
#include <memory>

#include "authorization.h"
#include "core/time.h"
#include "log/log.h"
#include "outbound/ca_bundle.h"
#include "pages/error_page.h"
#include "saml_routes.h"
#include "signin_support.h"
#include "social_routes.h"
#include "sso/connection_store.h"
#include "sso/oidc_client.h"
#include "sso/sso_requests.h"
#include "sso/warm.h"
#include "sso_support.h"

namespace portcullis::sso_worker {
namespace {

using oauth_worker::SigninDeps;
using server::Context;

constexpr std::chrono::milliseconds kWarmEvery{1000};
constexpr std::chrono::milliseconds kWarmTickBudget{250};
constexpr std::chrono::milliseconds kWarmStartBudget{5000};

// A warm-up's outbound requests: shorter limits than a sign-in's (an IdP that does not answer
// must not hold the worker between requests for long).
outbound::Options warm_options(const config::Config& config) {
  outbound::Options o = outbound_options(config);
  o.timeout = std::chrono::milliseconds(2000);
  o.connect_timeout = std::chrono::milliseconds(1000);
  return o;
}

sso::OidcClient oidc_client(const Context& ctx, const sso::Connection& c, std::string secret) {
  return sso::OidcClient(sso::OidcClientConfig{c.issuer, c.client_id, std::move(secret), c.scopes},
                         outbound_options(ctx));
}

Result<http::Response> start(Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::LoginRequest login,
                              oauth_worker::query_login_request(ctx, deps, now));
  sso::ConnectionStore connections(ctx.services.db, ctx.services.master_key);
  const std::string connection_id = ctx.request.query.get_or("connection_id", "");
  auto connection = connections.find(connection_id);
  if (!connection || connection->state != "active") {
    return refuse(ctx, &login, connection_id, connection ? connection->organization_id : "",
                  "connection_inactive", "no active connection");
  }
  const std::string browser = browser_secret_or_new(ctx.request);
  if (connection->type == "saml") return start_saml(ctx, login, *connection, browser, now);
  PORTCULLIS_ASSIGN_OR_RETURN(sso::PendingSignIn pending,
                              sso::SsoRequestStore(ctx.services.db, ctx.services.master_key)
                                  .start(connection->id, login.id, browser, now));
  sso::AuthorizationParams params{oidc_redirect_uri(ctx), pending.state, pending.nonce,
                                  sso::s256_challenge(pending.code_verifier),
                                  ctx.request.query.get_or("login_hint", login.login_hint)};
  auto url = oidc_client(ctx, *connection, "").authorization_url(params, now);
  if (!url) {
    return refuse(ctx, &login, connection->id, connection->organization_id, "discovery_failed",
                  url.status().message());
  }
  return to_identity_provider(ctx, *url, browser);
}

Result<http::Response> oidc_callback(Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  const http::Form& q = ctx.request.query;
  PORTCULLIS_ASSIGN_OR_RETURN(ReturnedOrPage back, take_returned(ctx, deps, now));
  if (!back.returned) return std::move(back.page);
  const sso::PendingSignIn& pending = back.returned->pending;
  const oauth::LoginRequest* login = &back.returned->login;
  const sso::Connection* connection = &back.returned->connection;
  const std::string& org = connection->organization_id;
  if (auto error = q.get("error")) {
    return refuse(ctx, login, connection->id, org, "idp_error", error->substr(0, 64));
  }
  const std::string code = q.get_or("code", "");
  if (code.empty()) return refuse(ctx, login, connection->id, org, "idp_error", "no code");
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::string secret,
      sso::ConnectionStore(ctx.services.db, ctx.services.master_key).client_secret(*connection));
  sso::OidcFailure failure;
  auto signed_in =
      oidc_client(ctx, *connection, std::move(secret))
          .finish(code, pending.code_verifier, oidc_redirect_uri(ctx), pending.nonce, now, failure);
  if (!signed_in || !failure.reason.empty()) {
    return refuse(ctx, login, connection->id, org,
                  failure.reason.empty() ? "idp_error" : failure.reason,
                  failure.detail.empty() ? signed_in.status().message() : failure.detail);
  }
  return finish_sign_in(ctx, deps, *login, *connection,
                        sso::user_from_claims(signed_in->claims, connection->mapping), now);
}

}  // namespace

void install_sso_routes(server::App& app) {
  // Warm up: the outbound trust store is parsed as the worker starts, not in a sign-in's
  // callback (a cold parse of the system CA bundle costs more than the whole callback).
  if (auto store = outbound::outbound_trust_store(app.services().config.outbound_ca_file); !store) {
    log::warn("outbound trust store not loaded", {{"error", store.status().message()}});
  }
  // Every active connection's Lasso server (SAML) or discovery document and keys (OIDC) are
  // built as the worker starts, before it accepts, and kept current between requests
  // (lib/sso/warm.h): no sign-in pays for them.
  server::Services& own = app.services();
  auto warmer = std::make_shared<sso::ConnectionWarmer>(own.db, own.master_key, own.config.base_url,
                                                        warm_options(own.config));
  auto started = std::make_shared<bool>(false);
  auto left = std::make_shared<int>(-1);
  app.add_idle_task("sso.warm", kWarmEvery, [warmer, started, left](server::Services&) {
    // At start, more time: the worker accepts nothing until it is done.
    auto tick = warmer->tick(unix_now(), *started ? kWarmTickBudget : kWarmStartBudget);
    *started = true;
    if (!tick) {
      log::info("sso connections not read", {{"error", tick.status().message()}});
      return;
    }
    // Once each time it catches up: everything active is prepared (or waiting to retry).
    if (tick->left == 0 && *left != 0) log::debug("sso connections ready");
    *left = tick->left;
  });
  auto deps = std::make_shared<SigninDeps>();
  auto flow = std::make_shared<std::unique_ptr<oauth::LoginFlow>>();
  deps->flow = [flow](server::Services& services) -> oauth::LoginFlow& {
    if (!*flow) *flow = oauth::make_login_flow(services);
    return **flow;
  };
  deps->clock = unix_now;
  app.add("GET", "/sso/start", oauth_worker::page_route(deps, start));
  app.add("GET", "/sso/oidc/callback", oauth_worker::page_route(deps, oidc_callback));
  install_saml_routes(app, deps);
  install_social_routes(app, deps);
  app.add_periodic("sso.prune", 600, [](server::Services& services) -> Status {
    return sso::SsoRequestStore::prune(services.db, unix_now());
  });
}

}  // namespace portcullis::sso_worker
