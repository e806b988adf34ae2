// The seam between the authorization endpoint and the interactive pages (sign-in, consent).
//
//   /oauth/authorize ──validates, stores a LoginRequest──► /oauth/login?login_request_id=…
//        (sign-in pages: e-mail code; later SSO, social, custom)  ──attach_user──►
//   LoginFlow::continue_after_sign_in ──► consent page, or straight back to the client
//   /oauth/consent (Allow / Deny)  ──► LoginFlow::finish_with_consent ──► 303 to redirect_uri
//
// The authorization side (handlers/oauth/authorization.*) implements LoginFlow; the pages only
// call it, so they never issue codes or build client redirects themselves.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "http/response.h"
#include "oauth/login_requests.h"
#include "pages/consent_view.h"
#include "server/app.h"

namespace portcullis::oauth {

class LoginFlow {
 public:
  virtual ~LoginFlow() = default;

  // NotFound when unknown, completed or expired (the pages then show "start again").
  virtual Result<LoginRequest> get(const std::string& login_request_id, int64_t now) = 0;
  // Records who signed in (after the sign-in method proved it), and the organization the
  // sign-in went through (oauth/signin_organization.h; empty when none).
  virtual Status attach_user(const std::string& login_request_id, const std::string& user_id,
                             int64_t auth_time, const std::string& signin_organization_id) = 0;
  virtual Result<pages::ConsentScreen> describe_consent(const LoginRequest& request) = 0;
  // After sign-in: 303 to the consent page, or — when a remembered consent covers the scopes
  // and prompt is not "consent" — the final 303 to the client with a code.
  virtual Result<http::Response> continue_after_sign_in(server::Context& ctx,
                                                        const LoginRequest& request) = 0;
  // The consent decision: on allow, remembers consent and returns the 303 with a code; on
  // deny, the 303 with error=access_denied. Completes the login request either way.
  virtual Result<http::Response> finish_with_consent(server::Context& ctx,
                                                     const LoginRequest& request, bool allow) = 0;
};

}  // namespace portcullis::oauth
