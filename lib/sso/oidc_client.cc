#include "sso/oidc_client.h"

#include <limits>
#include <map>
#include <memory>

#include "crypto/base64.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "format/json.h"
#include "http/request.h"
#include "jose/claims.h"
#include "jose/jwk.h"
#include "jose/jwt.h"
#include "log/log.h"
#include "outbound/url.h"

namespace portcullis::sso {
namespace {

constexpr size_t kMaxDocumentBytes = 256 * 1024;
constexpr std::string_view kTenantPlaceholder = "{tenantid}";

struct CachedMetadata {
  ProviderMetadata meta;
  int64_t fetched_at = 0;
};
struct CachedKeys {
  std::shared_ptr<const jose::RsaKeySet> keys;
  int64_t fetched_at = 0;
  // The last refetch an unknown kid caused (never: long ago).
  int64_t unknown_kid_fetch_at = std::numeric_limits<int64_t>::min() / 2;
};

// Per worker process (single-threaded), keyed by issuer and by JWKS URL.
std::map<std::string, CachedMetadata>& metadata_cache() {
  static std::map<std::string, CachedMetadata> cache;
  return cache;
}
std::map<std::string, CachedKeys>& key_cache() {
  static std::map<std::string, CachedKeys> cache;
  return cache;
}

// Fetches the key set at `jwks_uri` into its cache entry. On failure the entry keeps the keys
// it had (if any).
Status refresh_keys(outbound::Options options, const std::string& jwks_uri, int64_t now) {
  options.max_body_bytes = jose::kMaxJwksBytes;
  options.accept = "application/jwk-set+json, application/json";
  auto r = outbound::https_get(jwks_uri, options);
  if (!r || r->status != 200) return Status::unavailable("the JWKS could not be fetched");
  PORTCULLIS_ASSIGN_OR_RETURN(jose::RsaKeySet keys, jose::parse_jwks(r->body));
  CachedKeys& cached = key_cache()[jwks_uri];
  cached.keys = std::make_shared<const jose::RsaKeySet>(std::move(keys));
  cached.fetched_at = now;
  // As for discovery below: inside a request this line carries the request's id.
  log::info("SSO connection prepared", {{"jwks_uri", jwks_uri}, {"what", "jwks"}});
  return Status::ok();
}

std::string member(const Json::Value& v, const char* key) {
  const Json::Value* m = json::find_member(v, key);
  return m && m->isString() ? m->asString() : std::string();
}

Status https_member(const Json::Value& doc, const char* key, bool required, std::string& out) {
  out = member(doc, key);
  if (out.empty()) {
    return required ? Status::failed_precondition(std::string("discovery has no ") + key)
                    : Status::ok();
  }
  if (auto url = outbound::parse_https_url(out); !url) {
    return Status::failed_precondition(std::string("discovery's ") + key + " is not an https URL");
  }
  return Status::ok();
}

Json::Value fail(OidcFailure& failure, std::string reason, std::string detail) {
  failure.reason = std::move(reason);
  failure.detail = std::move(detail);
  return Json::Value();
}

std::string with_tenant(const std::string& issuer_template, const std::string& tenant) {
  std::string out = issuer_template;
  if (auto at = out.find(kTenantPlaceholder); at != std::string::npos) {
    out.replace(at, kTenantPlaceholder.size(), tenant);
  }
  return out;
}

// `issuer_template` holds {tenantid}, and is `configured` with one of the multi-tenant segments.
bool tenant_template_of(const std::string& issuer_template, const std::string& configured) {
  if (issuer_template.find(kTenantPlaceholder) == std::string::npos) return false;
  for (const char* segment : {"common", "organizations", "consumers"}) {
    if (with_tenant(issuer_template, segment) == configured) return true;
  }
  return false;
}

// A tenant id as Microsoft writes it: a GUID, lower-case hex and dashes, nothing else.
bool plausible_tenant(const std::string& tid) {
  if (tid.size() != 36) return false;
  for (size_t i = 0; i < tid.size(); ++i) {
    char ch = tid[i];
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? ch != '-' : !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  }
  return true;
}

const crypto::RsaPublicKey* find_key(const jose::RsaKeySet& keys, std::string_view kid) {
  for (const auto& [k, key] : keys) {
    if (k == kid) return &key;
  }
  return nullptr;
}

bool audience_has(const Json::Value& aud, const std::string& client_id, size_t& count) {
  count = 0;
  if (aud.isString()) {
    count = 1;
    return aud.asString() == client_id;
  }
  if (!aud.isArray()) return false;
  bool found = false;
  for (const auto& a : aud) {
    if (!a.isString()) return false;
    ++count;
    found = found || a.asString() == client_id;
  }
  return found;
}

}  // namespace

std::string s256_challenge(const std::string& verifier) {
  return crypto::base64url_encode(crypto::sha256(verifier));
}

Result<Json::Value> OidcClient::fetch_json(const std::string& url,
                                           const outbound::Options& options) {
  PORTCULLIS_ASSIGN_OR_RETURN(outbound::Response r, outbound::https_get(url, options));
  if (r.status != 200) {
    return Status::failed_precondition("the provider answered HTTP " + std::to_string(r.status));
  }
  auto doc = json::parse(r.body);
  if (!doc || !doc->isObject()) {
    return Status::failed_precondition("the provider's answer is not a JSON object");
  }
  return std::move(doc).value();
}

Result<Json::Value> OidcClient::get_with_token(const std::string& url,
                                               const std::string& access_token) {
  outbound::Options options = outbound_;
  options.headers.push_back("Authorization: Bearer " + access_token);
  PORTCULLIS_ASSIGN_OR_RETURN(outbound::Response r, outbound::https_get(url, options));
  if (r.status != 200) {
    return Status::failed_precondition("the provider answered HTTP " + std::to_string(r.status));
  }
  auto doc = json::parse(r.body);
  if (!doc || !(doc->isObject() || doc->isArray())) {
    return Status::failed_precondition("the provider's answer is not JSON");
  }
  return std::move(doc).value();
}

Result<ProviderMetadata> OidcClient::discover(int64_t now) {
  return discover(now, kDiscoveryCacheSeconds);
}

Status OidcClient::prefetch(int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(ProviderMetadata meta, discover(now, 0));
  return refresh_keys(outbound_, meta.jwks_uri, now);
}

Result<ProviderMetadata> OidcClient::discover(int64_t now, int64_t max_age) {
  auto& cache = metadata_cache();
  if (auto hit = cache.find(config_.issuer);
      hit != cache.end() && now - hit->second.fetched_at < max_age) {
    return hit->second.meta;
  }
  std::string base = config_.issuer;
  while (!base.empty() && base.back() == '/') base.pop_back();
  outbound::Options options = outbound_;
  options.max_body_bytes = kMaxDocumentBytes;
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value doc,
                              fetch_json(base + "/.well-known/openid-configuration", options));
  ProviderMetadata m;
  m.issuer = member(doc, "issuer");
  // OpenID Connect Discovery 1.0 §4.3: the issuer must be exactly the one asked about; a
  // multi-tenant issuer publishes its template, whose {tenantid} is the configured segment.
  if (m.issuer != config_.issuer &&
      !(config_.issuer_per_tenant && tenant_template_of(m.issuer, config_.issuer))) {
    return Status::failed_precondition("discovery's issuer is not the configured issuer");
  }
  PORTCULLIS_RETURN_IF_ERROR(
      https_member(doc, "authorization_endpoint", true, m.authorization_endpoint));
  PORTCULLIS_RETURN_IF_ERROR(https_member(doc, "token_endpoint", true, m.token_endpoint));
  PORTCULLIS_RETURN_IF_ERROR(https_member(doc, "jwks_uri", true, m.jwks_uri));
  PORTCULLIS_RETURN_IF_ERROR(https_member(doc, "userinfo_endpoint", false, m.userinfo_endpoint));
  cache[config_.issuer] = CachedMetadata{m, now};
  // One line per fetch: inside a request it carries the request's id, which is how the tests
  // show that no sign-in waits for one (warm.h fetches between requests).
  log::info("SSO connection prepared", {{"issuer", config_.issuer}, {"what", "discovery"}});
  return m;
}

Result<std::string> OidcClient::authorization_url(const AuthorizationParams& p, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(ProviderMetadata meta, discover(now));
  std::string scope;
  for (const auto& s : config_.scopes) scope += (scope.empty() ? "" : " ") + s;
  std::string url = meta.authorization_endpoint;
  url += url.find('?') == std::string::npos ? '?' : '&';
  url += "response_type=code&client_id=" + http::url_encode(config_.client_id) +
         "&redirect_uri=" + http::url_encode(p.redirect_uri) + "&scope=" + http::url_encode(scope) +
         "&state=" + http::url_encode(p.state) + "&nonce=" + http::url_encode(p.nonce) +
         "&code_challenge=" + http::url_encode(p.code_challenge) + "&code_challenge_method=S256";
  if (!p.login_hint.empty()) url += "&login_hint=" + http::url_encode(p.login_hint);
  return url;
}

Result<Json::Value> OidcClient::verify_id_token(const std::string& id_token,
                                                const ProviderMetadata& meta,
                                                const std::string& nonce, int64_t now,
                                                OidcFailure& failure) {
  // The extractor: the header alone first, to know whether the cached key set can verify it.
  // Only RS256 goes on to the key cache: "none" and HMAC are refused before any key is chosen
  // (and cannot spend the refetch budget).
  auto decoded = jose::decode_jwt(id_token);
  if (!decoded) return fail(failure, "invalid_id_token", decoded.status().message());
  if (member(decoded->header, "alg") != "RS256") {
    return fail(failure, "invalid_id_token", "alg is not RS256");
  }
  std::string kid = member(decoded->header, "kid");
  // The key cache: bounded staleness, and an unknown (non-empty) kid refetches at most once
  // per kJwksMinRefetchSeconds.
  auto& cache = key_cache();
  CachedKeys& cached = cache[meta.jwks_uri];
  bool stale = !cached.keys || now - cached.fetched_at >= kJwksCacheSeconds;
  bool unknown_kid = cached.keys && !kid.empty() && !find_key(*cached.keys, kid) &&
                     now - cached.unknown_kid_fetch_at >= kJwksMinRefetchSeconds;
  if (unknown_kid) cached.unknown_kid_fetch_at = now;
  if (stale || unknown_kid) {
    Status fetched = refresh_keys(outbound_, meta.jwks_uri, now);
    if (!fetched.is_ok() && !cached.keys) {
      return fail(failure, "jwks_unavailable", fetched.message());
    }
  }
  // The verifier: the signature by the key the kid names, then the claims.
  std::shared_ptr<const jose::RsaKeySet> keys = cached.keys;
  auto verified = jose::verify_jwt(
      id_token, [&](std::string_view k) { return keys ? find_key(*keys, k) : nullptr; });
  if (!verified) return fail(failure, "invalid_signature", verified.status().message());
  const Json::Value& c = verified->claims;
  std::string expected_issuer = meta.issuer;
  if (config_.issuer_per_tenant && meta.issuer.find(kTenantPlaceholder) != std::string::npos) {
    const std::string tid = member(c, "tid");
    if (!plausible_tenant(tid)) return fail(failure, "wrong_issuer", "tid");
    expected_issuer = with_tenant(meta.issuer, tid);
  }
  if (member(c, "iss") != expected_issuer) return fail(failure, "wrong_issuer", "iss");
  size_t audiences = 0;
  const Json::Value* aud = json::find_member(c, "aud");
  if (!aud || !audience_has(*aud, config_.client_id, audiences)) {
    return fail(failure, "wrong_audience", "aud");
  }
  const std::string azp = member(c, "azp");
  if ((audiences > 1 || !azp.empty()) && azp != config_.client_id) {
    return fail(failure, "wrong_audience", "azp");
  }
  const Json::Value* exp = json::find_member(c, "exp");
  auto exp_at = exp ? jose::numeric_date(*exp, false) : std::nullopt;
  if (!exp_at || now >= jose::saturating_add(*exp_at, kIdTokenLeewaySeconds)) {
    return fail(failure, "token_expired", "exp");
  }
  if (const Json::Value* iat = json::find_member(c, "iat")) {
    auto iat_at = jose::numeric_date(*iat, true);
    if (!iat_at || *iat_at > jose::saturating_add(now, kIdTokenLeewaySeconds)) {
      return fail(failure, "token_not_yet_valid", "iat");
    }
  }
  const std::string got_nonce = member(c, "nonce");
  if (got_nonce.empty() || !crypto::constant_time_equals(got_nonce, nonce)) {
    return fail(failure, "wrong_nonce", "nonce");
  }
  if (member(c, "sub").empty()) return fail(failure, "invalid_id_token", "no sub");
  return c;
}

Result<Json::Value> OidcClient::redeem(const ProviderMetadata& meta, const std::string& code,
                                       const std::string& code_verifier,
                                       const std::string& redirect_uri, OidcFailure& failure) {
  outbound::Options options = outbound_;
  options.form_body = "grant_type=authorization_code&code=" + http::url_encode(code) +
                      "&redirect_uri=" + http::url_encode(redirect_uri) +
                      "&code_verifier=" + http::url_encode(code_verifier);
  if (config_.client_secret_post) {
    *options.form_body += "&client_id=" + http::url_encode(config_.client_id) +
                          "&client_secret=" + http::url_encode(config_.client_secret);
  } else {
    // RFC 6749 §2.3.1: client_secret_basic, form-encoding both parts first.
    options.headers.push_back("Authorization: Basic " +
                              crypto::base64_encode(http::url_encode(config_.client_id) + ":" +
                                                    http::url_encode(config_.client_secret)));
  }
  auto answer = outbound::https_get(meta.token_endpoint, options);
  if (!answer) {
    fail(failure, "token_exchange_failed", answer.status().message());
    return Status::unavailable("the identity provider could not be reached");
  }
  auto body = json::parse(answer->body);
  if (answer->status != 200 || !body || !body->isObject()) {
    std::string error = body && body->isObject() ? member(*body, "error") : std::string();
    fail(failure, "token_exchange_failed",
         "HTTP " + std::to_string(answer->status) + (error.empty() ? "" : " " + error));
    return Status::failed_precondition("the identity provider refused the code");
  }
  return std::move(body).value();
}

Result<OidcClient::SignIn> OidcClient::finish(const std::string& code,
                                              const std::string& code_verifier,
                                              const std::string& redirect_uri,
                                              const std::string& nonce, int64_t now,
                                              OidcFailure& failure) {
  auto meta = discover(now);
  if (!meta) {
    fail(failure, "discovery_failed", meta.status().message());
    return meta.status();
  }
  auto redeemed = redeem(*meta, code, code_verifier, redirect_uri, failure);
  if (!redeemed) return redeemed.status();
  const Json::Value* body = &*redeemed;
  const std::string id_token = member(*body, "id_token");
  if (id_token.empty()) {
    fail(failure, "invalid_id_token", "no id_token in the token response");
    return Status::failed_precondition("no ID token");
  }
  auto claims = verify_id_token(id_token, *meta, nonce, now, failure);
  if (!claims || !failure.reason.empty()) {
    return Status::unauthenticated("the ID token was refused: " + failure.reason);
  }
  SignIn out{std::move(claims).value()};
  const std::string access_token = member(*body, "access_token");
  if (member(out.claims, "email").empty() && !meta->userinfo_endpoint.empty() &&
      !access_token.empty()) {
    outbound::Options info = outbound_;
    info.headers.push_back("Authorization: Bearer " + access_token);
    auto extra = fetch_json(meta->userinfo_endpoint, info);
    // OpenID Connect Core §5.3.2: userinfo's sub must be the ID token's.
    if (extra && member(*extra, "sub") == member(out.claims, "sub")) {
      for (const auto& key : extra->getMemberNames()) {
        if (!out.claims.isMember(key)) out.claims[key] = (*extra)[key];
      }
    } else {
      log::info("userinfo not used", {{"issuer", config_.issuer}});
    }
  }
  return out;
}

}  // namespace portcullis::sso
