#include "access.h"

#include "format/scope_list.h"
#include "log/log.h"
#include "oauth/grants.h"
#include "validation/challenge.h"
#include "validation/key_cache.h"

namespace portcullis::demo_mcp {

Access::Access(server::Services& services)
    : services_(services), keys_(std::make_shared<validation::KeyRingKeys>(services.keys)) {}

Result<std::shared_ptr<validation::Verifier>> Access::verifier_for(
    const oauth::Resource& resource) {
  // A PATCH may have moved the resource to another URL: the audience follows it.
  if (!verifier_ || verifier_->config().audience != resource.server_url) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        verifier_,
        validation::Verifier::create(
            {.issuer = resource.issuer(services_.config), .audience = resource.server_url}, keys_));
  }
  return verifier_;
}

Result<Authenticated> Access::authenticate(const http::Request& request,
                                           const oauth::Resource& resource,
                                           const std::string& first_scope, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::shared_ptr<validation::Verifier> verifier,
                              verifier_for(resource));
  auto authorization = request.header("authorization");
  validation::Verdict verdict = verifier->verify(
      authorization ? std::optional<std::string_view>(*authorization) : std::nullopt, {}, now);
  if (verdict.valid()) {
    // Revoked grants put their live access tokens on the deny-list until they expire.
    PORTCULLIS_ASSIGN_OR_RETURN(
        bool revoked, oauth::GrantStore(services_.db).is_access_token_revoked(verdict.claims->jti));
    if (revoked)
      verdict = validation::Verdict::refuse(validation::Outcome::kInvalidToken, "revoked");
  }
  if (!verdict.valid()) {
    if (verdict.outcome != validation::Outcome::kNoToken) {
      log::info("access token refused",
                {{"reason", verdict.reason}, {"request_id", request.request_id}});
    }
    return Authenticated(validation::challenge_response(
        verdict, validation::protected_resource_metadata_url(resource.server_url), {first_scope}));
  }
  const validation::AccessClaims& claims = *verdict.claims;
  return Authenticated(mcp::Caller{.subject = claims.sub,
                                   .client_id = claims.client_id,
                                   .scope = claims.scope,
                                   .scopes = {claims.scopes.begin(), claims.scopes.end()}});
}

http::Response insufficient_scope(const oauth::Resource& resource, const mcp::Caller& caller,
                                  const std::string& required) {
  std::vector<std::string> wanted;
  for (const oauth::ScopeDef& s : resource.scopes) {
    if (s.name == required || caller.scopes.count(s.name) > 0) wanted.push_back(s.name);
  }
  if (resource.find_scope(required) == nullptr) wanted.push_back(required);
  // The library's challenge names the scopes to ask for; its body names the one that is missing.
  validation::Verdict verdict =
      validation::Verdict::refuse(validation::Outcome::kInsufficientScope, "missing scope");
  verdict.missing_scope = format::join_scopes(wanted);
  http::Response r =
      http::Response::text(403, validation::insufficient_scope_body(required), "application/json");
  r.set_header("WWW-Authenticate",
               validation::www_authenticate(
                   verdict, validation::protected_resource_metadata_url(resource.server_url), ""));
  return r;
}

}  // namespace portcullis::demo_mcp
