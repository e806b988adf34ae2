// The consent step: only for the user the login request was signed in as, in the browser that
// holds that user's session.
#include "identity/session_store.h"
#include "identity/user_store.h"
#include "pages/consent_view.h"
#include "pages/error_page.h"
#include "signin_handlers.h"

namespace portcullis::oauth_worker {
namespace {

// The request's session belongs to the user who signed in on this login request. Without
// it, another browser (or a forged post) could answer for them.
bool signed_in_here(server::Context& ctx, const oauth::LoginRequest& login, int64_t now) {
  if (login.user_id.empty()) return false;
  identity::SessionStore sessions(ctx.services.db, ctx.services.config);
  auto session = sessions.current(ctx.request, now);
  return session && session->user_id == login.user_id;
}

}  // namespace

Result<http::Response> show_consent(server::Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  oauth::LoginFlow& flow = deps.flow(ctx.services);
  PORTCULLIS_ASSIGN_OR_RETURN(
      oauth::LoginRequest login,
      load_login_request(flow, ctx.request.query.get_or("login_request_id", ""), now));
  if (!signed_in_here(ctx, login, now)) {
    return http::Response::see_other("/oauth/login?login_request_id=" + http::url_encode(login.id));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::ConsentScreen screen, flow.describe_consent(login));
  identity::UserStore users(ctx.services.db);
  PORTCULLIS_ASSIGN_OR_RETURN(identity::User user, users.get(login.user_id));
  return pages::consent_page(pages::ConsentView{login.id, login.csrf_token, user.email,
                                                std::move(screen), client_form_targets(login)});
}

Result<http::Response> decide_consent(server::Context& ctx, SigninDeps& deps) {
  int64_t now = deps.clock();
  oauth::LoginFlow& flow = deps.flow(ctx.services);
  PORTCULLIS_ASSIGN_OR_RETURN(PostedForm posted, read_login_form(ctx, flow, now));
  const http::Form& form = posted.form;
  const oauth::LoginRequest& login = posted.login;
  std::string decision = form.get_or("decision", "");
  if (decision != "allow" && decision != "deny") {
    return pages::error_page(400, "Choose Allow or Deny",
                             "The form did not say whether to allow access. Go back and choose.");
  }
  if (!signed_in_here(ctx, login, now)) {
    return pages::error_page(403, "Your session has ended",
                             "Sign in again to decide whether to allow access.", login.id,
                             "Sign in again");
  }
  return flow.finish_with_consent(ctx, login, decision == "allow");
}

}  // namespace portcullis::oauth_worker
