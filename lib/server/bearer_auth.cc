#include "server/bearer_auth.h"

#include "core/time.h"
#include "dpop/presentation.h"
#include "dpop/replay_cache.h"
#include "format/scope_list.h"
#include "jose/claims.h"
#include "jose/jwt.h"
#include "management/api_clients.h"
#include "management/scopes.h"
#include "validation/extractor.h"

namespace portcullis::server {
namespace {

// RFC 9449 §7: a token the client bound to its DPoP key (client_credentials with a proof) is
// accepted only with the DPoP scheme and a fresh proof by that key for this request.
Status check_dpop(const http::Request& request, server::Services& services,
                  const jose::DecodedJwt& decoded, const validation::ExtractedToken& extracted,
                  int64_t now) {
  const std::string bound = dpop::bound_key(decoded.claims);
  const bool dpop_scheme = extracted.scheme == validation::TokenScheme::kDPoP;
  if (bound.empty() && !dpop_scheme) return Status::ok();  // the common case: no store access
  const std::optional<std::string> proof = request.header("dpop");
  const std::string url = services.config.base_url + request.path;
  dpop::Presentation presentation;
  presentation.dpop_scheme = dpop_scheme;
  presentation.access_token = extracted.token;
  presentation.proof = proof;
  presentation.method = request.method;
  presentation.url = url;
  presentation.now = now;
  presentation.iat_leeway_seconds = services.config.dpop_iat_leeway_seconds;
  dpop::ReplayCache replay(services.db);
  Status st = dpop::check_presentation(
      bound, presentation, [&](const dpop::VerifiedProof& p) { return replay.remember(p); });
  if (st.is_ok() || st.code() != Code::kUnauthenticated) return st;
  return Status::unauthenticated("the access token is not valid: " + st.message());
}

}  // namespace

Result<server::Caller> authenticate_management_token(const http::Request& request,
                                                     const server::Auth& auth,
                                                     server::Services& services) {
  auto header = request.header("authorization");
  const validation::ExtractedToken extracted = validation::extract_token(header);
  if (!extracted.ok()) return Status::unauthenticated("a Bearer management token is required");
  const std::string_view token = extracted.token;
  int64_t now = unix_now();
  // Management tokens are always RS256. A key the ring cannot know now (the database away) is
  // unavailable (503, retry), not the caller's bad token (lib/keys/key_ring.h).
  auto decoded = services.keys.verify(token, now, jose::JwsAlg::kRS256);
  if (!decoded) {
    if (decoded.status().code() == Code::kUnavailable) return decoded.status();
    return Status::unauthenticated("the access token is not valid");
  }
  jose::ClaimChecks checks;
  checks.issuer = services.config.base_url;
  checks.audience = management::management_audience(services.config);
  checks.typ = "at+jwt";
  checks.now = now;
  if (Status st = jose::check_claims(*decoded, checks); !st.is_ok()) {
    return Status::unauthenticated("the access token is not valid: " + st.message());
  }
  PORTCULLIS_RETURN_IF_ERROR(check_dpop(request, services, *decoded, extracted, now));
  const Json::Value& sub = decoded->claims["sub"];
  if (!sub.isString()) return Status::unauthenticated("the access token has no subject");
  management::ApiClientStore clients(services.db);
  auto client = clients.get(sub.asString());
  if (!client) {
    if (client.status().code() == Code::kNotFound) {
      return Status::unauthenticated("the API client of this token no longer exists");
    }
    return client.status();
  }
  server::Caller caller;
  caller.kind = server::Caller::Kind::kApiClient;
  caller.id = client->id;
  // The token's scopes, less any the client has lost since the token was issued.
  const Json::Value& scope = decoded->claims["scope"];
  if (scope.isString()) {
    for (const auto& s : format::scope_set(scope.asString())) {
      if (client->scopes.count(s)) caller.scopes.insert(s);
    }
  }
  if (!auth.scope.empty() && !caller.has_scope(auth.scope)) {
    return Status::permission_denied("this endpoint needs the scope " + auth.scope);
  }
  return caller;
}

}  // namespace portcullis::server
