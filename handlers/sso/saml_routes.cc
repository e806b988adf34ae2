#include "saml_routes.h"

#include "core/time.h"
#include "custom_login/method_policy.h"
#include "http/request.h"
#include "identity/session_store.h"
#include "identity/user_store.h"
#include "pages/error_page.h"
#include "sso/connection_store.h"
#include "sso/saml_sp.h"
#include "sso/sso_requests.h"
#include "sso_support.h"

namespace portcullis::sso_worker {
namespace {

using oauth_worker::SigninDeps;
using server::Context;

// The SP of a SAML connection with its keys; a connection stored before SP keys existed gets
// them first. The private keys are opened only if this worker has no Lasso server for it yet.
Result<sso::SamlSp> sp(Context& ctx, sso::Connection& c) {
  return sso::ConnectionStore(ctx.services.db, ctx.services.master_key)
      .saml_sp(c, ctx.services.config.base_url, unix_now());
}

Result<http::Response> metadata(Context& ctx, SigninDeps&) {
  sso::ConnectionStore connections(ctx.services.db, ctx.services.master_key);
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c,
                              connections.find(ctx.request.path_param("connection_id")));
  if (c.type != "saml") return Status::not_found("no such SAML connection");
  PORTCULLIS_ASSIGN_OR_RETURN(sso::SamlSp ours, sp(ctx, c));
  // An IdP metadata Lasso cannot read still leaves the SP's own document to publish.
  auto signs = sso::signs_authn_requests(c, ours);
  const bool signed_requests = signs ? *signs : c.sign_authn_requests;
  http::Response r = http::Response::text(200, sso::sp_metadata(ours, signed_requests),
                                          "application/samlmetadata+xml");
  r.set_header("Cache-Control", "public, max-age=300");
  return r;
}

// The form's SAMLResponse, verified (sso::read_response) as the answer to the AuthnRequest
// `in_response_to` (empty: unsolicited, which must then name none), its assertion id never
// seen before (kept until its NotOnOrAfter + skew). On a refusal `reason` is set.
Result<sso::SamlLogin> verified_response(Context& ctx, sso::Connection& connection,
                                         const http::Form& form, const std::string& in_response_to,
                                         int64_t now, std::string& reason) {
  PORTCULLIS_ASSIGN_OR_RETURN(sso::SamlSp ours, sp(ctx, connection));
  PORTCULLIS_ASSIGN_OR_RETURN(
      sso::SamlLogin verified,
      sso::read_response(connection, ours, form.get_or("SAMLResponse", ""), now, reason));
  if (verified.in_response_to != in_response_to) {
    reason = "in_response_to_mismatch";
    return Status::permission_denied(in_response_to.empty()
                                         ? "an unsolicited response names a request"
                                         : "InResponseTo is not this sign-in's request");
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      bool fresh, sso::SsoRequestStore(ctx.services.db, ctx.services.master_key)
                      .remember_assertion(connection.id, verified.assertion_id,
                                          verified.not_on_or_after + sso::kSamlSkewSeconds));
  if (!fresh) {
    reason = "replayed_assertion";
    return Status::permission_denied("the assertion id was seen before");
  }
  return verified;
}

// A Response no pending sign-in of ours asked for: IdP-initiated login. Refused unless the
// connection enables it; then accepted only with every check of a solicited one (and no
// InResponseTo), and it lands on a page of ours with a session — never at a client, and never
// at a URL the RelayState names (docs/sso.md says why this is safe).
Result<http::Response> unsolicited(Context& ctx, Result<sso::Connection>& connection,
                                   const http::Form& form, int64_t now) {
  const std::string relay_state = form.get_or("RelayState", "");
  const std::string org = connection ? connection->organization_id : "";
  const bool usable = connection && connection->type == "saml" && connection->state == "active";
  if (!usable || !connection->idp_initiated_login_enabled) {
    http::Response refused = refuse(ctx, nullptr, connection ? connection->id : "", org,
                                    relay_state.empty() ? "unsolicited_response" : "unknown_state",
                                    "no pending SAML sign-in has this RelayState");
    if (!relay_state.empty()) return refused;
    return pages::error_page(
        403, "Single sign-on failed",
        "Your identity provider started this sign-in on its own (IdP-initiated login), which "
        "your organization's connection does not accept. Open the application you want to use "
        "and sign in from there.");
  }
  std::string reason;
  auto verified = verified_response(ctx, *connection, form, "", now, reason);
  if (!verified) {
    if (reason.empty()) return verified.status();
    return refuse(ctx, nullptr, connection->id, org, reason, verified.status().message());
  }
  auto user = sso::provision(ctx.services.db, *connection,
                             sso::user_from_saml(*verified, connection->mapping), reason);
  if (!user) {
    if (reason.empty()) return user.status();
    return refuse(ctx, nullptr, connection->id, org, reason, user.status().message());
  }
  // The sign-in methods the environment and the organization allow apply here too, before a
  // session exists (custom_login/method_policy.h).
  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::LoginSettings settings,
                              custom_login::LoginSettingsStore(ctx.services.db).get());
  PORTCULLIS_ASSIGN_OR_RETURN(
      custom_login::MethodDecision allowed,
      custom_login::check_method(ctx.services.db, settings, "sso", user->email, {org}));
  if (!allowed.allowed) {
    return refuse(ctx, nullptr, connection->id, org, allowed.reason,
                  "the sign-in method is not allowed");
  }
  identity::SessionStore sessions(ctx.services.db, ctx.services.config);
  events::Event e = ctx.event(events::type::kUserLoginSucceeded);
  e.user_id = user->id;
  e.organization_id = org;
  e.data["method"] = "sso";
  e.data["connection_id"] = connection->id;
  e.data["connection_type"] = "saml";
  e.data["idp_initiated"] = true;
  std::string cookie;
  // The session and user.login.succeeded in one transaction (docs/events.md, "Recording").
  PORTCULLIS_RETURN_IF_ERROR(ctx.change_with_event(
      [&]() -> Status {
        // Signed in through the connection's organization, like a solicited sign-in.
        PORTCULLIS_ASSIGN_OR_RETURN(cookie, sessions.create(user->id, now, ctx.request, now, org));
        return Status::ok();
      },
      std::move(e)));
  http::Response r = http::Response::see_other("/sso/saml/signed-in");
  r.headers.emplace_back("Set-Cookie", std::move(cookie));
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
  if (!pending || pending->connection_id != connection_id) {
    return unsolicited(ctx, connection, form, now);
  }
  const std::string org = connection ? connection->organization_id : "";
  auto login =
      oauth_worker::load_login_request(deps.flow(ctx.services), pending->login_request_id, now);
  if (!login) return pages::expired_login_page();
  if (!connection || connection->state != "active" || connection->type != "saml") {
    return refuse(ctx, &*login, connection_id, org, "connection_inactive", "");
  }
  std::string reason;
  auto verified = verified_response(ctx, *connection, form, pending->request_id, now, reason);
  if (!verified) {
    if (reason.empty()) return verified.status();
    return refuse(ctx, &*login, connection->id, org, reason, verified.status().message());
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

// Where an IdP-initiated login lands: who is signed in, and what to do next.
Result<http::Response> signed_in(Context& ctx, SigninDeps& deps) {
  identity::SessionStore sessions(ctx.services.db, ctx.services.config);
  auto session = sessions.current(ctx.request, deps.clock());
  if (!session) {
    return pages::error_page(403, "You are not signed in",
                             "Open the application you want to use and sign in from there.");
  }
  PORTCULLIS_ASSIGN_OR_RETURN(identity::User user,
                              identity::UserStore(ctx.services.db).get(session->user_id));
  return pages::error_page(
      200, "You are signed in",
      "You are signed in as " + user.email +
          " through your organization's identity provider. Go back to your application and "
          "connect it: you will not be asked to sign in again, only to allow its access.");
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
                                  sso::Connection& connection, const std::string& browser,
                                  int64_t now) {
  sso::SsoRequestStore requests(ctx.services.db, ctx.services.master_key);
  PORTCULLIS_ASSIGN_OR_RETURN(sso::PendingSignIn pending,
                              requests.start(connection.id, login.id, browser, now));
  PORTCULLIS_ASSIGN_OR_RETURN(sso::SamlSp ours, sp(ctx, connection));
  auto redirect = sso::authn_request(connection, ours, pending.state);
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
  app.add("GET", "/sso/saml/signed-in", oauth_worker::page_route(deps, signed_in));
}

}  // namespace portcullis::sso_worker
