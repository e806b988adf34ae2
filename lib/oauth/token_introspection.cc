#include "oauth/token_introspection.h"

#include <algorithm>

#include "format/json.h"
#include "jose/claims.h"
#include "jose/jwt.h"
#include "tokens/grants.h"

namespace portcullis::oauth {
namespace {

Json::Value inactive() {
  Json::Value v(Json::objectValue);
  v["active"] = false;
  return v;
}

// The issuer's resource id for "{base}/resources/{id}"; "" for the environment issuer.
std::optional<std::string> resource_of_issuer(const config::Config& config,
                                              const std::string& iss) {
  if (iss == config.base_url) return std::string();
  std::string prefix = config.base_url + "/resources/";
  if (iss.rfind(prefix, 0) == 0 && iss.size() > prefix.size() &&
      iss.find('/', prefix.size()) == std::string::npos) {
    return iss.substr(prefix.size());
  }
  return std::nullopt;
}

// A verified access token of ours, or nullopt; unavailable when its signing key cannot be known
// now (the database away: the token may be good, so it is neither active nor inactive).
using MaybeJwt = std::optional<jose::DecodedJwt>;
Result<MaybeJwt> verify_access_token(server::Services& services, const std::string& token,
                                     int64_t now) {
  if (std::count(token.begin(), token.end(), '.') != 2) return MaybeJwt();
  auto decoded = services.keys.verify(token, now);
  if (!decoded) {
    if (decoded.status().code() == Code::kUnavailable) return decoded.status();
    return MaybeJwt();
  }
  const Json::Value* iss = json::find_member(decoded->claims, "iss");
  const Json::Value* aud = json::find_member(decoded->claims, "aud");
  if (!iss || !iss->isString() || !aud || !aud->isString()) return MaybeJwt();
  if (!resource_of_issuer(services.config, iss->asString())) return MaybeJwt();
  jose::ClaimChecks checks;
  checks.issuer = iss->asString();
  checks.audience = aud->asString();
  checks.typ = "at+jwt";
  checks.now = now;
  checks.leeway_seconds = 0;  // introspection speaks for the issuer: no skew allowance
  if (!jose::check_claims(*decoded, checks).is_ok()) return MaybeJwt();
  return MaybeJwt(std::move(decoded).value());
}

// The presented refresh token, or nullopt when it is not one of ours.
Result<std::optional<RefreshTokenState>> find_refresh_token(server::Services& services,
                                                            const std::string& token) {
  auto found = GrantStore(services.db).find_refresh_token(services.master_key, token);
  if (!found) {
    if (found.status().code() == Code::kNotFound) return std::optional<RefreshTokenState>();
    return found.status();
  }
  return std::optional<RefreshTokenState>(std::move(found).value());
}

}  // namespace

Result<Json::Value> introspect(server::Services& services, const std::string& token, int64_t now) {
  if (token.empty() || token.size() > 16384) return inactive();
  PORTCULLIS_ASSIGN_OR_RETURN(MaybeJwt jwt, verify_access_token(services, token, now));
  if (jwt) {
    const Json::Value& c = jwt->claims;
    const Json::Value* jti = json::find_member(c, "jti");
    if (!jti || !jti->isString()) return inactive();
    PORTCULLIS_ASSIGN_OR_RETURN(bool revoked,
                                GrantStore(services.db).is_access_token_revoked(jti->asString()));
    if (revoked) return inactive();
    Json::Value v(Json::objectValue);
    v["active"] = true;
    for (const char* name :
         {"scope", "client_id", "sub", "aud", "iss", "exp", "iat", "nbf", "jti", "cnf"}) {
      if (const Json::Value* m = json::find_member(c, name)) v[name] = *m;
    }
    // RFC 9449 §6.2: a DPoP-bound token says so, with its key's thumbprint in cnf.
    v["token_type"] = json::find_member(c, "cnf") ? "DPoP" : "Bearer";
    return v;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(auto refresh, find_refresh_token(services, token));
  if (!refresh) return inactive();
  const int64_t expires_at = std::min(refresh->expires_at, refresh->grant.absolute_expires_at);
  if (refresh->rotated || refresh->grant.revoked_at || expires_at <= now) return inactive();
  Json::Value v(Json::objectValue);
  v["active"] = true;
  v["scope"] = refresh->grant.scope;
  v["client_id"] = refresh->grant.client_id;
  v["sub"] = refresh->grant.user_id;
  v["exp"] = static_cast<Json::Int64>(expires_at);
  v["iss"] = services.config.base_url + "/resources/" + refresh->grant.resource_id;
  v["token_type"] = "refresh_token";
  return v;
}

Status revoke(server::Context& ctx, const ClientInfo& client, const std::string& token,
              const std::string& token_type_hint, int64_t now) {
  server::Services& services = ctx.services;
  GrantStore grants(services.db);
  auto revoke_refresh = [&]() -> Result<bool> {
    PORTCULLIS_ASSIGN_OR_RETURN(auto refresh, find_refresh_token(services, token));
    if (!refresh) return false;
    if (refresh->grant.client_id != client.client_id) return true;  // not theirs: silently ignored
    events::Event e = ctx.event(events::type::kTokenRevoked);
    e.client_id = client.client_id;
    e.user_id = refresh->grant.user_id;
    e.resource_id = refresh->grant.resource_id;
    e.data["grant_id"] = refresh->grant.id;
    e.data["token_type"] = "refresh_token";
    // The revocation and its event in one transaction (docs/events.md, "Recording").
    PORTCULLIS_RETURN_IF_ERROR(ctx.change_with_event(
        [&] { return grants.revoke(refresh->grant.id, "revoked_by_client", now); }, std::move(e)));
    return true;
  };
  auto revoke_access = [&]() -> Result<bool> {
    PORTCULLIS_ASSIGN_OR_RETURN(MaybeJwt jwt, verify_access_token(services, token, now));
    if (!jwt) return false;
    const Json::Value* owner = json::find_member(jwt->claims, "client_id");
    const Json::Value* jti = json::find_member(jwt->claims, "jti");
    const Json::Value* exp = json::find_member(jwt->claims, "exp");
    if (!owner || !owner->isString() || owner->asString() != client.client_id || !jti ||
        !jti->isString() || !exp || !exp->isIntegral()) {
      return true;
    }
    events::Event e = ctx.event(events::type::kTokenRevoked);
    e.client_id = client.client_id;
    e.data["jti"] = jti->asString();
    e.data["token_type"] = "access_token";
    PORTCULLIS_RETURN_IF_ERROR(ctx.change_with_event(
        [&] { return grants.revoke_access_token(jti->asString(), exp->asInt64(), now); },
        std::move(e)));
    return true;
  };
  // The hint only chooses the order of the lookups (RFC 7009 §2.1).
  if (token_type_hint == "access_token") {
    PORTCULLIS_ASSIGN_OR_RETURN(bool done, revoke_access());
    if (!done) PORTCULLIS_RETURN_IF_ERROR(revoke_refresh().status());
  } else {
    PORTCULLIS_ASSIGN_OR_RETURN(bool done, revoke_refresh());
    if (!done) PORTCULLIS_RETURN_IF_ERROR(revoke_access().status());
  }
  return Status::ok();
}

}  // namespace portcullis::oauth
