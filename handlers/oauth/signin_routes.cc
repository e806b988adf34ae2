#include "signin_routes.h"

#include "core/time.h"
#include "custom_login/custom_logins.h"
#include "identity/email_challenges.h"
#include "identity/session_store.h"
#include "pages/error_page.h"
#include "signin_handlers.h"

namespace portcullis::oauth_worker {
void install_signin_routes(server::App& app, LoginFlowProvider flow) {
  install_signin_routes(app, SigninOptions{std::move(flow)});
}

void install_signin_routes(server::App& app, SigninOptions options) {
  auto deps = std::make_shared<SigninDeps>();
  deps->flow = std::move(options.flow);
  deps->mailer = options.mailer
                     ? std::move(options.mailer)
                     : std::shared_ptr<mail::Mailer>(mail::make_mailer(app.services().config));
  deps->clock = options.clock ? std::move(options.clock) : std::function<int64_t()>(unix_now);

  app.add("GET", "/oauth/login", page_route(deps, show_login));
  app.add("POST", "/oauth/login/email", page_route(deps, send_code));
  app.add("GET", "/oauth/login/code", page_route(deps, show_code));
  app.add("POST", "/oauth/login/code", page_route(deps, check_code));
  app.add("GET", "/oauth/login/link", page_route(deps, show_link));
  app.add("POST", "/oauth/login/link", page_route(deps, use_link));
  app.add("GET", "/oauth/login/custom", page_route(deps, start_custom));
  app.add("GET", "/oauth/login/continue", page_route(deps, continue_custom));
  app.add("GET", "/oauth/consent", page_route(deps, show_consent));
  app.add("POST", "/oauth/consent", page_route(deps, decide_consent));

  app.add_periodic("signin.prune", 600, [](server::Services& services) -> Status {
    int64_t now = unix_now();
    PORTCULLIS_RETURN_IF_ERROR(identity::EmailChallenges::prune(services.db, now));
    PORTCULLIS_RETURN_IF_ERROR(custom_login::CustomLoginStore::prune(services.db, now));
    return identity::SessionStore::prune(services.db, now);
  });
}

}  // namespace portcullis::oauth_worker
