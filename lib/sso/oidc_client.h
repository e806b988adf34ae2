// An OpenID Connect relying party (OpenID Connect Core 1.0, Discovery 1.0; RFC 6749, RFC 7636),
// independent of where its configuration comes from: enterprise SSO connections use it, and
// so can social login's generic OIDC providers.
//
// Every request to the provider goes through the SSRF guard (outbound/https_get.h). The ID
// token path is split as Envoy's jwt_authn splits it: the header is read first (extractor: alg
// must be RS256, the kid named), a per-worker key cache answers the key for (jwks_uri, kid),
// then the verifier checks the signature and the claims. Discovery documents and key sets are
// cached per worker process for at most kDiscoveryCacheSeconds / kJwksCacheSeconds (bounded
// staleness); a kid the cached set lacks refetches it — once, and at most once per
// kJwksMinRefetchSeconds per key set and worker whatever tokens arrive — so a provider's key
// rotation works without a restart and made-up kids cannot make the worker hammer the IdP.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "outbound/https_get.h"

namespace portcullis::sso {

inline constexpr int64_t kDiscoveryCacheSeconds = 3600;
inline constexpr int64_t kJwksCacheSeconds = 3600;
inline constexpr int64_t kJwksMinRefetchSeconds = 60;
inline constexpr int64_t kIdTokenLeewaySeconds = 120;

struct OidcClientConfig {
  std::string issuer;
  std::string client_id;
  std::string client_secret;
  std::vector<std::string> scopes;
  // A multi-tenant issuer (Microsoft's /common, /organizations, /consumers): discovery's issuer
  // holds "{tenantid}" in place of that segment, and each ID token's iss must be it with the
  // token's own `tid` (a GUID) put in.
  bool issuer_per_tenant = false;
  // client_secret_post (RFC 6749 §2.3.1's alternative, what GitHub takes) instead of Basic.
  bool client_secret_post = false;
};

struct ProviderMetadata {
  std::string issuer;
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string userinfo_endpoint;  // may be empty
  std::string jwks_uri;
};

// What the browser is sent to the provider with.
struct AuthorizationParams {
  std::string redirect_uri;
  std::string state;
  std::string nonce;
  std::string code_challenge;  // S256 of the code verifier
  std::string login_hint;      // may be empty
};

// Why a sign-in through the provider failed: `reason` is a stable token recorded in the
// user.login.failed event (docs/sso.md lists them); `detail` is for the log.
struct OidcFailure {
  std::string reason;
  std::string detail;
};

class OidcClient {
 public:
  OidcClient(OidcClientConfig config, outbound::Options outbound)
      : config_(std::move(config)), outbound_(std::move(outbound)) {}

  // The provider's discovery document ({issuer}/.well-known/openid-configuration), checked:
  // its issuer equals the configured one exactly (or, issuer_per_tenant, is its {tenantid}
  // template), the endpoints are https URLs.
  Result<ProviderMetadata> discover(int64_t now);
  // Fetches the discovery document and the JWKS into this worker's caches now, whatever their
  // age (a worker keeping its connections ready, sso/warm.h), so that no sign-in pays for them.
  // On failure the caches keep what they had.
  Status prefetch(int64_t now);
  // The provider's authorization endpoint with the code-flow parameters.
  Result<std::string> authorization_url(const AuthorizationParams& params, int64_t now);

  // Redeems the code (client_secret_basic, PKCE verifier) and verifies the ID token: signature
  // by a key of the provider's JWKS (RS256 only: never "none", never HMAC), iss, aud, azp when
  // several audiences, exp and iat (kIdTokenLeewaySeconds), nonce. The claims of the ID token,
  // completed from the userinfo endpoint when email is missing. On failure, the reason.
  struct SignIn {
    Json::Value claims;
  };
  // The code redeemed at the token endpoint (client_secret_basic, PKCE verifier): the token
  // response, or the failure (reason token_exchange_failed).
  Result<Json::Value> redeem(const ProviderMetadata& meta, const std::string& code,
                             const std::string& code_verifier, const std::string& redirect_uri,
                             OidcFailure& failure);
  // A GET of a protected resource of the provider (userinfo; GitHub's /user/emails) with the
  // access token: its JSON (object or array); FailedPrecondition for any other answer than 200.
  Result<Json::Value> get_with_token(const std::string& url, const std::string& access_token);
  Result<SignIn> finish(const std::string& code, const std::string& code_verifier,
                        const std::string& redirect_uri, const std::string& nonce, int64_t now,
                        OidcFailure& failure);

  // The ID token checks alone (finish uses them; exposed for tests).
  Result<Json::Value> verify_id_token(const std::string& id_token, const ProviderMetadata& meta,
                                      const std::string& nonce, int64_t now, OidcFailure& failure);

 private:
  Result<Json::Value> fetch_json(const std::string& url, const outbound::Options& options);
  // The cached document when younger than max_age seconds, else fetched (and cached).
  Result<ProviderMetadata> discover(int64_t now, int64_t max_age);

  OidcClientConfig config_;
  outbound::Options outbound_;
};

// A random PKCE code verifier's S256 challenge (RFC 7636 §4.2).
std::string s256_challenge(const std::string& verifier);

}  // namespace portcullis::sso
