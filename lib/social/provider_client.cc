#include "social/provider_client.h"

#include "format/json.h"
#include "http/request.h"
#include "identity/email_address.h"

namespace portcullis::social {
namespace {

// A claim as text: strings as they are, integers (GitHub's numeric id) in decimal.
std::string claim(const Json::Value& claims, const std::string& name) {
  if (name.empty()) return "";
  const Json::Value* v = json::find_member(claims, name);
  if (!v) return "";
  if (v->isString()) return v->asString();
  if (v->isIntegral() && !v->isBool())
    return v->isUInt64() ? std::to_string(v->asUInt64()) : std::to_string(v->asInt64());
  return "";
}

// true, or the string "true" (some providers send claims as strings).
bool claim_true(const Json::Value& claims, const std::string& name) {
  if (name.empty()) return false;
  const Json::Value* v = json::find_member(claims, name);
  if (!v) return false;
  if (v->isBool()) return v->asBool();
  return v->isString() && (v->asString() == "true" || v->asString() == "1");
}

Status fail(sso::OidcFailure& failure, std::string reason, std::string detail) {
  failure.reason = std::move(reason);
  failure.detail = std::move(detail);
  return Status::failed_precondition("the provider's answer was refused: " + failure.reason);
}

sso::OidcClientConfig config_of(const SocialConnection& c, std::string secret) {
  sso::OidcClientConfig config{c.issuer, c.client_id, std::move(secret), c.scopes};
  config.issuer_per_tenant = c.provider == "microsoft";
  config.client_secret_post = !c.is_oidc() && c.token_endpoint_auth_method != "client_secret_basic";
  return config;
}

}  // namespace

ProviderClient::ProviderClient(const SocialConnection& connection, std::string client_secret,
                               outbound::Options outbound)
    : connection_(connection),
      client_(config_of(connection, std::move(client_secret)), std::move(outbound)) {}

Result<std::string> ProviderClient::authorization_url(const sso::AuthorizationParams& p,
                                                      int64_t now) {
  if (connection_.is_oidc()) return client_.authorization_url(p, now);
  std::string scope;
  for (const auto& s : connection_.scopes) scope += (scope.empty() ? "" : " ") + s;
  std::string url = connection_.authorization_endpoint;
  url += url.find('?') == std::string::npos ? '?' : '&';
  url += "response_type=code&client_id=" + http::url_encode(connection_.client_id) +
         "&redirect_uri=" + http::url_encode(p.redirect_uri) +
         (scope.empty() ? "" : "&scope=" + http::url_encode(scope)) +
         "&state=" + http::url_encode(p.state) +
         "&code_challenge=" + http::url_encode(p.code_challenge) + "&code_challenge_method=S256";
  if (!p.login_hint.empty()) url += "&login=" + http::url_encode(p.login_hint);
  return url;
}

Profile ProviderClient::from_claims(const SocialConnection& c, const Json::Value& claims) {
  Profile p;
  p.subject = claim(claims, c.mapping.subject);
  p.email = claim(claims, c.mapping.email);
  p.given_name = claim(claims, c.mapping.given_name);
  p.family_name = claim(claims, c.mapping.family_name);
  if (c.provider == "microsoft") {
    // nOAuth: `email` is whatever a tenant's administrator typed; email_verified is not sent.
    // A UPN's domain is one the tenant proved it owns (and a domain is verified in one tenant
    // only), so an address equal to the UPN is the tenant's to give.
    const std::string upn = claim(claims, "upn");
    p.email_verified = claim_true(claims, "xms_edov") ||
                       claim(claims, "tid") == kMicrosoftConsumerTenant ||
                       (!upn.empty() && identity::email_key(upn) == identity::email_key(p.email));
  } else {
    p.email_verified = claim_true(claims, c.mapping.email_verified);
  }
  return p;
}

Result<Profile> ProviderClient::finish(const std::string& code, const std::string& code_verifier,
                                       const std::string& redirect_uri, const std::string& nonce,
                                       int64_t now, sso::OidcFailure& failure) {
  if (!connection_.is_oidc()) return finish_oauth2(code, code_verifier, redirect_uri, failure);
  auto signed_in = client_.finish(code, code_verifier, redirect_uri, nonce, now, failure);
  if (!signed_in) return signed_in.status();
  if (!failure.reason.empty()) return Status::unauthenticated(failure.reason);
  return from_claims(connection_, signed_in->claims);
}

Result<Profile> ProviderClient::finish_oauth2(const std::string& code,
                                              const std::string& code_verifier,
                                              const std::string& redirect_uri,
                                              sso::OidcFailure& failure) {
  sso::ProviderMetadata meta;
  meta.token_endpoint = connection_.token_endpoint;
  auto token = client_.redeem(meta, code, code_verifier, redirect_uri, failure);
  if (!token) return token.status();
  const std::string access_token = claim(*token, "access_token");
  if (access_token.empty()) {
    return fail(failure, "token_exchange_failed", "no access_token in the token response");
  }
  auto user = client_.get_with_token(connection_.userinfo_endpoint, access_token);
  if (!user || !user->isObject()) {
    return fail(failure, "userinfo_failed",
                user ? "userinfo is not an object" : user.status().message());
  }
  Profile p = from_claims(connection_, *user);
  if (connection_.provider == "github") {
    // GitHub's /user `email` is the public profile address, chosen freely: only the address
    // /user/emails marks primary and verified is the user's.
    p.email.clear();
    p.email_verified = false;
    auto name = claim(*user, "name");
    if (!name.empty()) {
      auto space = name.rfind(' ');
      p.given_name = space == std::string::npos ? name : name.substr(0, space);
      p.family_name = space == std::string::npos ? "" : name.substr(space + 1);
    }
    auto emails = client_.get_with_token(connection_.emails_endpoint, access_token);
    if (!emails || !emails->isArray()) {
      return fail(failure, "userinfo_failed",
                  emails ? "/user/emails is not an array" : emails.status().message());
    }
    // The primary address, verified or not (an unverified one is refused as such).
    for (const auto& e : *emails) {
      if (e.isObject() && claim_true(e, "primary")) {
        p.email = claim(e, "email");
        p.email_verified = !p.email.empty() && claim_true(e, "verified");
        break;
      }
    }
  }
  if (p.subject.empty()) return fail(failure, "subject_missing", "no subject in userinfo");
  return p;
}

}  // namespace portcullis::social
