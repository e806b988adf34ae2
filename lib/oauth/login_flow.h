// The seam between the authorization endpoint and the interactive pages (sign-in, consent).
//
//   /oauth/authorize ──validates, stores a LoginRequest──► /oauth/login?login_request_id=…
//        (sign-in pages: e-mail code; later SSO, social, custom)  ──attach_user──►
//   LoginFlow::continue_after_sign_in ──► consent page, or straight back to the client
//   /oauth/consent (Allow / Deny)  ──► LoginFlow::finish_with_consent ──► 303 to redirect_uri
//
// The authorization side (lib/oauth/authorization.*) implements LoginFlow; the pages only
// call it, so they never issue codes or build client redirects themselves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "http/response.h"
#include "server/app.h"

namespace portcullis::oauth {

// An authorization request waiting for the user (table login_requests). Lives 10 minutes.
struct LoginRequest {
  std::string id;  // random, URL-safe: the `login_request_id` of the pages
  std::string client_id;
  std::string resource_id;
  std::string redirect_uri;
  std::vector<std::string> scopes;
  std::string state;
  std::string code_challenge;
  std::string nonce;
  std::string prompt;      // "", "none", "login", "consent"
  std::string login_hint;  // an e-mail address, may be empty
  // Enterprise SSO hints (contract §10): each may be empty; any of them, like a login_hint in
  // a domain with an SSO connection, sends the browser straight to the identity provider.
  std::string domain_hint;
  std::string organization_id;
  std::string connection_id;
  std::string dpop_jkt;  // RFC 9449 §10: the code will be bound to this DPoP key thumbprint
  std::string user_id;   // set once the user signed in
  int64_t auth_time = 0;
  std::string csrf_token;  // every form of the flow carries it; compared in constant time
  int64_t expires_at = 0;
};

// What the consent page shows (contract §3): who asks, for which server, where it redirects.
struct ConsentScreen {
  struct Scope {
    std::string name;
    std::string description;
  };
  std::string resource_name;
  std::string client_name;
  std::string client_host;  // for CIMD clients: the host of the client_id URL
  std::string redirect_host;
  std::vector<Scope> scopes;  // the requested ones, with the resource's descriptions
  bool client_is_cimd = false;
  bool redirect_is_localhost = false;  // shown as a warning: any local app could receive it
};

class LoginFlow {
 public:
  virtual ~LoginFlow() = default;

  // NotFound when unknown, completed or expired (the pages then show "start again").
  virtual Result<LoginRequest> get(const std::string& login_request_id, int64_t now) = 0;
  // Records who signed in (after the sign-in method proved it).
  virtual Status attach_user(const std::string& login_request_id, const std::string& user_id,
                             int64_t auth_time) = 0;
  virtual Result<ConsentScreen> describe_consent(const LoginRequest& request) = 0;
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
