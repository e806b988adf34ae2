// The provider side of a social sign-in: the redirect to the provider, and the answer it sends
// back turned into a Profile. OpenID Connect providers (google, microsoft, oidc) go through the
// relying party of lib/sso (discovery, PKCE, nonce, ID token verified against the JWKS);
// OAuth 2.0 providers (github, oauth2) redeem the code (PKCE too) and read the userinfo
// endpoint with the access token. Every request goes through the SSRF guard.
//
// Whether the e-mail address is verified is decided per provider (docs/login.md):
//  - oidc, google: the email_verified claim is true (absent is not verified);
//  - microsoft: the email claim is mutable by any tenant's administrator (the "nOAuth"
//    takeover), so it counts only with the xms_edov claim true, when it equals the `upn` claim
//    (a UPN's domain is verified by its tenant, and by one tenant only), or for a personal
//    Microsoft account (tenant 9188040d-6c67-4c5b-b112-36a304b66dad), whose address Microsoft
//    verified;
//  - github: only the address /user/emails marks primary and verified;
//  - oauth2: the mapped email_verified claim is true.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <string>

#include "core/status.h"
#include "outbound/https_get.h"
#include "social/connection.h"
#include "sso/oidc_client.h"

namespace portcullis::social {

inline constexpr const char* kMicrosoftConsumerTenant = "9188040d-6c67-4c5b-b112-36a304b66dad";

struct Profile {
  std::string subject;
  std::string email;
  bool email_verified = false;
  std::string given_name;
  std::string family_name;
};

class ProviderClient {
 public:
  ProviderClient(const SocialConnection& connection, std::string client_secret,
                 outbound::Options outbound);

  Result<std::string> authorization_url(const sso::AuthorizationParams& params, int64_t now);
  // On failure `failure.reason` is a stable token for the user.login.failed event.
  Result<Profile> finish(const std::string& code, const std::string& code_verifier,
                         const std::string& redirect_uri, const std::string& nonce, int64_t now,
                         sso::OidcFailure& failure);

  // The profile from OIDC claims (exposed for tests).
  static Profile from_claims(const SocialConnection& c, const Json::Value& claims);

 private:
  Result<Profile> finish_oauth2(const std::string& code, const std::string& code_verifier,
                                const std::string& redirect_uri, sso::OidcFailure& failure);

  SocialConnection connection_;
  sso::OidcClient client_;
};

}  // namespace portcullis::social
