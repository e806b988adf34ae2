#include "signin_support.h"

#include "crypto/compare.h"
#include "custom_login/method_policy.h"
#include "identity/identity_store.h"
#include "identity/session_store.h"
#include "identity/user_store.h"
#include "log/log.h"
#include "oauth/signin_organization.h"
#include "pages/error_page.h"
#include "pages/security_headers.h"

namespace portcullis::oauth_worker {

namespace {

Result<http::Response> continue_flow(server::Context& ctx, oauth::LoginFlow& flow,
                                     const std::string& login_request_id,
                                     const std::string& user_id,
                                     const std::string& signin_organization_id, int64_t now) {
  PORTCULLIS_RETURN_IF_ERROR(
      flow.attach_user(login_request_id, user_id, now, signin_organization_id));
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::LoginRequest signed_in, flow.get(login_request_id, now));
  return flow.continue_after_sign_in(ctx, signed_in);
}

}  // namespace

server::Route page_route(std::shared_ptr<SigninDeps> deps, PageHandler handler) {
  server::Route route;
  route.handler = [deps, handler](server::Context& ctx) -> Result<http::Response> {
    auto result = handler(ctx, *deps);
    if (result) return std::move(result).value();
    return pages::status_page(result.status());
  };
  return route;
}

Result<oauth::LoginRequest> load_login_request(oauth::LoginFlow& flow, const std::string& id,
                                               int64_t now) {
  // login_requests.id is at most 64 characters; anything else cannot name one.
  if (id.empty() || id.size() > 64) return Status::not_found("no such login request");
  return flow.get(id, now);
}

Result<oauth::LoginRequest> query_login_request(server::Context& ctx, SigninDeps& deps,
                                                int64_t now) {
  return load_login_request(deps.flow(ctx.services),
                            ctx.request.query.get_or("login_request_id", ""), now);
}

bool form_post_allowed(const http::Request& request, const oauth::LoginRequest& login,
                       const http::Form& form) {
  // Browsers say where a request comes from; our forms post same-origin. The token below is
  // the real defence, this only refuses what a browser already flagged.
  if (auto site = request.header("sec-fetch-site");
      site && *site != "same-origin" && *site != "none") {
    return false;
  }
  auto csrf = form.get("csrf");
  return csrf && !login.csrf_token.empty() && crypto::constant_time_equals(*csrf, login.csrf_token);
}

Result<PostedForm> read_login_form(server::Context& ctx, oauth::LoginFlow& flow, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(http::Form form, ctx.request.form());
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::LoginRequest login,
                              load_login_request(flow, form.get_or("login_request_id", ""), now));
  if (!form_post_allowed(ctx.request, login, form)) {
    return Status::permission_denied("the form's CSRF token does not match");
  }
  return PostedForm{std::move(form), std::move(login)};
}

std::vector<std::string> client_form_targets(const oauth::LoginRequest& login) {
  std::vector<std::string> targets;
  if (auto source = pages::form_action_source(login.redirect_uri)) {
    targets.push_back(*source);
  } else {
    // The 303 to the client will be blocked by the browser: say so where someone will look.
    log::warn("redirect URI has no CSP form-action source", {{"login_request", login.id}});
  }
  return targets;
}

std::string resource_name(oauth::LoginFlow& flow, const oauth::LoginRequest& login) {
  auto screen = flow.describe_consent(login);
  return screen ? screen->resource_name : std::string();
}

events::Event login_event(const server::Context& ctx, const oauth::LoginRequest& login,
                          const events::EventType& type, const std::string& user_id) {
  events::Event e = ctx.event(type);
  e.client_id = login.client_id;
  e.resource_id = login.resource_id;
  e.user_id = user_id;
  e.data["login_request_id"] = login.id;
  return e;
}

void record_login_failure(server::Context& ctx, const oauth::LoginRequest& login,
                          const std::string& reason, const std::string& email,
                          const std::string& organization_id) {
  // The reason and the address tried, never the code or a link token.
  events::Event e = login_event(ctx, login, events::type::kUserLoginFailed, "");
  e.data["reason"] = reason;
  e.data["method"] = "email";
  if (!email.empty()) e.data["email"] = email;
  if (!organization_id.empty()) e.organization_id = organization_id;
  ctx.events.add(std::move(e));
}

namespace {

// The organization whose SSO connection or custom login completion proved the user (the
// `event_data` of complete_sign_in), empty for the other methods.
std::string vouched_organization(const Json::Value& event_data) {
  return event_data.isObject() && event_data["organization_id"].isString()
             ? event_data["organization_id"].asString()
             : std::string();
}

void add_event_data(events::Event& e, const Json::Value& event_data) {
  if (!event_data.isObject()) return;
  for (const auto& key : event_data.getMemberNames()) {
    if (key == "organization_id") {
      e.organization_id = event_data[key].asString();
    } else {
      e.data[key] = event_data[key];
    }
  }
}

// The sign-in method policy (custom_login::check_method) for `email` signing in by `method`: a
// refusal page, or nothing when the method may be used.
Result<std::optional<http::Response>> refuse_method(server::Context& ctx,
                                                    const oauth::LoginRequest& login,
                                                    const std::string& email,
                                                    const std::string& method,
                                                    const Json::Value& event_data) {
  // An e-mailed code or link is the e-mail method; the others are named as the policy names them.
  const bool by_email = method.rfind("email_", 0) == 0;
  PORTCULLIS_ASSIGN_OR_RETURN(custom_login::LoginSettings settings,
                              custom_login::LoginSettingsStore(ctx.services.db).get());
  const std::vector<std::string> named = {login.organization_id, vouched_organization(event_data)};
  PORTCULLIS_ASSIGN_OR_RETURN(
      custom_login::MethodDecision allowed,
      custom_login::check_method(ctx.services.db, settings, by_email ? "email" : method, email,
                                 named));
  if (allowed.allowed) return std::optional<http::Response>();
  events::Event e = login_event(ctx, login, events::type::kUserLoginFailed, "");
  e.data["reason"] = allowed.reason;
  e.data["method"] = method;
  e.data["email"] = email;
  add_event_data(e, event_data);
  if (!allowed.organization_id.empty()) e.organization_id = allowed.organization_id;
  ctx.events.add(std::move(e));
  return std::optional<http::Response>(pages::error_page(
      403, "Use another way to sign in",
      allowed.organization_id.empty()
          ? "This way of signing in is not offered here. Go back and choose another one."
          : "Your organization does not allow this way of signing in. Go back and sign in "
            "the way your organization asks, for example through its identity provider.",
      login.id, "Back to sign-in"));
}

// The browser session of a user the method found, once the policy allowed the method.
Result<http::Response> start_session(server::Context& ctx, SigninDeps& deps,
                                     const oauth::LoginRequest& login, const identity::User& user,
                                     const std::string& email, const std::string& method,
                                     int64_t now, const Json::Value& event_data) {
  if (!user.active) {
    events::Event e = login_event(ctx, login, events::type::kUserLoginFailed, user.id);
    e.data["reason"] = "user_inactive";
    e.data["method"] = method;
    add_event_data(e, event_data);
    ctx.events.add(std::move(e));
    return pages::error_page(403, "This account is deactivated",
                             "Your account is deactivated, so you cannot sign in. Contact your "
                             "administrator.");
  }
  if (method.rfind("email_", 0) == 0) {
    // The address itself is the account an e-mailed code proves (the user's `identities`).
    // Linked to another user already (an address moved between users by an admin): the code
    // proved the address, which names this user now; the old link stays where it was.
    Status linked = identity::IdentityStore(ctx.services.db)
                        .link(user.id, identity::Identity{"email", email, "email", "", ""});
    if (!linked.is_ok() && linked.code() != Code::kAlreadyExists) return linked;
  }
  // The session remembers it, and the login request carries it to the code (org_id).
  PORTCULLIS_ASSIGN_OR_RETURN(const std::string organization,
                              oauth::signin_organization(ctx.services.db, login, user.id,
                                                         vouched_organization(event_data)));
  events::Event e = login_event(ctx, login, events::type::kUserLoginSucceeded, user.id);
  e.data["method"] = method;
  add_event_data(e, event_data);
  identity::SessionStore sessions(ctx.services.db, ctx.services.config);
  std::string cookie;
  // The session and user.login.succeeded in one transaction (docs/events.md, "Recording").
  PORTCULLIS_RETURN_IF_ERROR(ctx.change_with_event(
      [&]() -> Status {
        PORTCULLIS_ASSIGN_OR_RETURN(cookie,
                                    sessions.create(user.id, now, ctx.request, now, organization));
        return Status::ok();
      },
      std::move(e)));
  auto next = continue_flow(ctx, deps.flow(ctx.services), login.id, user.id, organization, now);
  // The user is signed in whatever the flow says next: the cookie goes out with any answer.
  http::Response response = next ? std::move(next).value() : pages::status_page(next.status());
  response.headers.emplace_back("Set-Cookie", std::move(cookie));
  return response;
}

}  // namespace

Result<http::Response> complete_sign_in(server::Context& ctx, SigninDeps& deps,
                                        const oauth::LoginRequest& login, const std::string& email,
                                        const std::string& method, int64_t now,
                                        const Json::Value& event_data) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<http::Response> refused,
                              refuse_method(ctx, login, email, method, event_data));
  if (refused) return std::move(*refused);
  identity::UserStore users(ctx.services.db);
  auto user = users.find_or_create_by_verified_email(email);
  if (!user) {
    if (user.status().code() == Code::kFailedPrecondition) {
      record_login_failure(ctx, login, "ambiguous_email", email);
      return pages::error_page(403, "This address cannot sign in",
                               "An account with a very similar address exists. Contact your "
                               "administrator.");
    }
    return user.status();
  }
  return start_session(ctx, deps, login, *user, email, method, now, event_data);
}

Result<http::Response> complete_sign_in_as(server::Context& ctx, SigninDeps& deps,
                                           const oauth::LoginRequest& login,
                                           const identity::User& user, const std::string& method,
                                           int64_t now, const Json::Value& event_data) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<http::Response> refused,
                              refuse_method(ctx, login, user.email, method, event_data));
  if (refused) return std::move(*refused);
  return start_session(ctx, deps, login, user, user.email, method, now, event_data);
}

}  // namespace portcullis::oauth_worker
