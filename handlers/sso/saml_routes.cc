#include "saml_routes.h"

#include "http/request.h"
#include "pages/error_page.h"
#include "sso/connection_store.h"
#include "sso/saml_sp.h"
#include "sso/sso_requests.h"
#include "sso_support.h"

namespace portcullis::sso_worker {
namespace {

using oauth_worker::SigninDeps;
using server::Context;

sso::SamlSp sp(const Context& ctx, const std::string& connection_id) {
  return sso::sp_of(ctx.services.config.base_url, connection_id);
}

Result<http::Response> metadata(Context& ctx, SigninDeps&) {
  sso::ConnectionStore connections(ctx.services.db, ctx.services.master_key);
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c,
                              connections.find(ctx.request.path_param("connection_id")));
  if (c.type != "saml") return Status::not_found("no such SAML connection");
  http::Response r =
      http::Response::text(200, sso::sp_metadata(sp(ctx, c.id)), "application/samlmetadata+xml");
  r.set_header("Cache-Control", "public, max-age=300");
  return r;
}

// The IdP's POST. No cookie arrives with it (SameSite=Lax), so the browser is checked at the
// finish; everything about the response itself is checked here.
Result<http::Response> acs(Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  PORTCULLIS_ASSIGN_OR_RETURN(http::Form form, ctx.request.form());
  const std::string connection_id = ctx.request.path_param("connection_id");
  const std::string relay_state = form.get_or("RelayState", "");
  sso::SsoRequestStore requests(ctx.services.db, ctx.services.master_key);
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<sso::SamlPending> pending,
                              requests.find_saml(relay_state, now));
  sso::ConnectionStore connections(ctx.services.db, ctx.services.master_key);
  auto connection = connections.find(connection_id);
  const std::string org = connection ? connection->organization_id : "";
  if (!pending || pending->connection_id != connection_id) {
    // IdP-initiated (unsolicited) login is off for every connection in this version.
    return refuse(ctx, nullptr, connection ? connection->id : "", org,
                  relay_state.empty() ? "unsolicited_response" : "unknown_state",
                  "no pending SAML sign-in has this RelayState");
  }
  auto login =
      oauth_worker::load_login_request(deps.flow(ctx.services), pending->login_request_id, now);
  if (!login) return pages::expired_login_page();
  if (!connection || connection->state != "active" || connection->type != "saml") {
    return refuse(ctx, &*login, connection_id, org, "connection_inactive", "");
  }
  std::string reason;
  auto verified = sso::read_response(*connection, sp(ctx, connection->id),
                                     form.get_or("SAMLResponse", ""), now, reason);
  if (!verified) {
    if (reason.empty()) return verified.status();
    return refuse(ctx, &*login, connection->id, org, reason, verified.status().message());
  }
  if (verified->in_response_to != pending->request_id) {
    return refuse(ctx, &*login, connection->id, org, "in_response_to_mismatch",
                  "InResponseTo is not this sign-in's request");
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      bool fresh, requests.remember_assertion(connection->id, verified->assertion_id,
                                              verified->not_on_or_after + sso::kSamlSkewSeconds));
  if (!fresh) {
    return refuse(ctx, &*login, connection->id, org, "replayed_assertion",
                  "the assertion id was seen before");
  }
  sso::AssertedUser user = sso::user_from_saml(*verified, connection->mapping);
  Json::Value parked(Json::objectValue);
  parked["email"] = user.email;
  parked["given_name"] = user.given_name;
  parked["family_name"] = user.family_name;
  parked["subject"] = user.subject;
  parked["external_id"] = user.external_id;
  PORTCULLIS_ASSIGN_OR_RETURN(bool recorded, requests.record_saml_result(relay_state, parked));
  if (!recorded) return refuse(ctx, &*login, connection->id, org, "unknown_state", "ACS ran");
  return http::Response::see_other("/sso/saml/finish?state=" + http::url_encode(relay_state));
}

Result<http::Response> finish(Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  PORTCULLIS_ASSIGN_OR_RETURN(ReturnedOrPage back, take_returned(ctx, deps, now));
  if (!back.returned) return std::move(back.page);
  const auto& [pending, login, connection] = *back.returned;
  const Json::Value& r = pending.saml_result;
  if (!r.isObject()) {
    return refuse(ctx, &login, connection.id, connection.organization_id, "unknown_state",
                  "no ACS");
  }
  sso::AssertedUser user{r["email"].asString(), r["given_name"].asString(),
                         r["family_name"].asString(), r["subject"].asString(),
                         r["external_id"].asString()};
  return finish_sign_in(ctx, deps, login, connection, user, now);
}

}  // namespace

Result<http::Response> start_saml(Context& ctx, const oauth::LoginRequest& login,
                                  const sso::Connection& connection, const std::string& browser,
                                  int64_t now) {
  sso::SsoRequestStore requests(ctx.services.db, ctx.services.master_key);
  PORTCULLIS_ASSIGN_OR_RETURN(sso::PendingSignIn pending,
                              requests.start(connection.id, login.id, browser, now));
  auto redirect = sso::authn_request(connection, sp(ctx, connection.id), pending.state);
  if (!redirect) {
    return refuse(ctx, &login, connection.id, connection.organization_id, "idp_metadata",
                  redirect.status().message());
  }
  PORTCULLIS_RETURN_IF_ERROR(requests.set_saml_request_id(pending.state, redirect->request_id));
  return to_identity_provider(ctx, redirect->url, browser);
}

void install_saml_routes(server::App& app, std::shared_ptr<SigninDeps> deps) {
  app.add("GET", "/sso/saml/{connection_id}/metadata", oauth_worker::page_route(deps, metadata));
  app.add("POST", "/sso/saml/{connection_id}/acs", oauth_worker::page_route(deps, acs));
  app.add("GET", "/sso/saml/finish", oauth_worker::page_route(deps, finish));
}

}  // namespace portcullis::sso_worker
