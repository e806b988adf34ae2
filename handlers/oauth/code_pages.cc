// The code step and the e-mailed link.
#include "identity/email_challenges.h"
#include "pages/error_page.h"
#include "pages/signin_views.h"
#include "signin_handlers.h"

namespace portcullis::oauth_worker {
namespace {

http::Response back_to_login(const oauth::LoginRequest& login) {
  return http::Response::see_other("/oauth/login?login_request_id=" + http::url_encode(login.id));
}

http::Response dead_link_page() {
  return pages::error_page(400, "This sign-in link has expired",
                           "This sign-in link has expired or was already used; return to the "
                           "application and try again.");
}

pages::CodeView code_view(const oauth::LoginRequest& login, const std::string& email) {
  return pages::CodeView{login.id, login.csrf_token, email, "", client_form_targets(login)};
}

}  // namespace

Result<http::Response> show_code(server::Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::LoginRequest login, query_login_request(ctx, deps, now));
  identity::EmailChallenges challenges(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(auto live, challenges.live_for(login.id, now));
  if (!live) return back_to_login(login);
  return pages::code_page(200, code_view(login, live->email));
}

Result<http::Response> check_code(server::Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  oauth::LoginFlow& flow = deps.flow(ctx.services);
  PORTCULLIS_ASSIGN_OR_RETURN(PostedForm posted, read_login_form(ctx, flow, now));
  const http::Form& form = posted.form;
  const oauth::LoginRequest& login = posted.login;

  identity::EmailChallenges challenges(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(identity::CodeCheck check,
                              challenges.check_code(login.id, form.get_or("code", ""), now));
  using Outcome = identity::CodeCheck::Outcome;
  switch (check.outcome) {
    case Outcome::kAccepted:
      return complete_sign_in(ctx, deps, login, check.challenge.email, "email_code", now);
    case Outcome::kWrong: {
      record_login_failure(ctx, login, "wrong_code", check.challenge.email);
      pages::CodeView v = code_view(login, check.challenge.email);
      v.error = "That code is not right. Check the e-mail and try again (" +
                std::to_string(check.attempts_left) +
                (check.attempts_left == 1 ? " attempt" : " attempts") + " left).";
      return pages::code_page(400, v);
    }
    case Outcome::kLocked: {
      record_login_failure(ctx, login, "too_many_attempts", check.challenge.email);
      pages::LoginView v{login.id,
                         login.csrf_token,
                         resource_name(flow, login),
                         check.challenge.email,
                         "Too many wrong codes: that code no longer works. Send a new one.",
                         {}};
      return pages::login_page(400, v);
    }
    case Outcome::kNoChallenge:
      break;
  }
  record_login_failure(ctx, login, "expired_code", "");
  pages::LoginView v{login.id,
                     login.csrf_token,
                     resource_name(flow, login),
                     login.login_hint,
                     "That code has expired or was already used. Enter your e-mail address to "
                     "get a new one.",
                     {}};
  return pages::login_page(400, v);
}

Result<http::Response> show_link(server::Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  oauth::LoginFlow& flow = deps.flow(ctx.services);
  std::string token = ctx.request.query.get_or("token", "");
  identity::EmailChallenges challenges(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(auto challenge, challenges.find_by_link(token, now));
  if (!challenge) return dead_link_page();
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::LoginRequest login,
                              load_login_request(flow, challenge->login_request_id, now));
  return pages::link_page(pages::LinkView{token, login.csrf_token, challenge->email,
                                          resource_name(flow, login), client_form_targets(login)});
}

Result<http::Response> use_link(server::Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  oauth::LoginFlow& flow = deps.flow(ctx.services);
  PORTCULLIS_ASSIGN_OR_RETURN(http::Form form, ctx.request.form());
  std::string token = form.get_or("token", "");
  identity::EmailChallenges challenges(ctx.services.db);
  // The link names its login request; the form's CSRF token must be that request's.
  PORTCULLIS_ASSIGN_OR_RETURN(auto challenge, challenges.find_by_link(token, now));
  if (!challenge) return dead_link_page();
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::LoginRequest login,
                              load_login_request(flow, challenge->login_request_id, now));
  if (!form_post_allowed(ctx.request, login, form)) {
    return Status::permission_denied("the form's CSRF token does not match");
  }
  PORTCULLIS_ASSIGN_OR_RETURN(auto redeemed, challenges.redeem_link(token, now));
  if (!redeemed) return dead_link_page();  // used by a concurrent request meanwhile
  return complete_sign_in(ctx, deps, login, redeemed->email, "email_link", now);
}

}  // namespace portcullis::oauth_worker
