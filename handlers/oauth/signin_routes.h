// The interactive pages of the oauth worker: sign-in (passwordless e-mail today; SSO, social
// and custom methods later) and consent (contract §3, §10, §12). They take a login request
// that /oauth/authorize created and hand it back through oauth::LoginFlow, which alone issues
// codes and builds client redirects.
//
//   GET  /oauth/login?login_request_id=…        first page: the e-mail form (+ other methods)
//   POST /oauth/login/email                      CSRF, rate limits, mail a code and a link
//   GET  /oauth/login/code?login_request_id=…   the code form
//   POST /oauth/login/code                       check it (10 min, single use, 5 attempts)
//   GET  /oauth/login/link?token=…               the e-mailed link: a one-button page
//   POST /oauth/login/link                       use it (same effect as the code)
//   GET  /oauth/consent?login_request_id=…      what the client asks for
//   POST /oauth/consent                          Allow / Deny → LoginFlow::finish_with_consent
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "login_flow.h"
#include "mail/mailer.h"
#include "server/app.h"

namespace portcullis::oauth_worker {

// How a handler reaches the worker's LoginFlow (built once per worker process, after the fork).
using LoginFlowProvider = std::function<oauth::LoginFlow&(server::Services&)>;

struct SigninOptions {
  LoginFlowProvider flow;
  std::shared_ptr<mail::Mailer> mailer;  // null: mail::make_mailer(config)
  std::function<int64_t()> clock;        // null: unix_now (tests move time)
};

void install_signin_routes(server::App& app, LoginFlowProvider flow);
void install_signin_routes(server::App& app, SigninOptions options);

}  // namespace portcullis::oauth_worker
