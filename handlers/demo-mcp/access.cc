#include "access.h"

#include <set>
#include <vector>

#include "core/time.h"
#include "format/scope_list.h"
#include "log/log.h"
#include "validation/challenge.h"
#include "validation/dpop_checker.h"
#include "validation/key_cache.h"

namespace portcullis::demo_mcp {
namespace {

using validation::Outcome;
using validation::Verdict;

}  // namespace

Access::Access(server::Services& services)
    : services_(services),
      keys_(std::make_shared<validation::KeyRingKeys>(services.keys)),
      // RFC 9449 §7: a DPoP-bound token needs a fresh proof by its key for this very request.
      proofs_(validation::DpopProofChecker::over_replay_cache(
          services.db, services.config.dpop_iat_leeway_seconds)),
      deny_list_(services.config.validator_denylist_sync_ms),
      events_(services.config.validator_event_flush_ms) {}

Result<validation::Verifier*> Access::verifier_for(const oauth::Resource& resource) {
  // A PATCH may have moved the resource to another URL: the audience follows it, and tokens
  // cached for the old one go.
  if (!verifier_ || verifier_->config().audience != resource.server_url) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        verifier_, validation::Verifier::create({.issuer = resource.issuer(services_.config),
                                                 .audience = resource.server_url},
                                                keys_, proofs_));
    cache_ = std::make_unique<validation::TokenCache>();
  }
  return verifier_.get();
}

Result<Verdict> Access::authenticate(server::Context& ctx, const oauth::Resource& resource,
                                     int64_t now) {
  const int64_t now_ms = monotonic_ms();
  events_.drain_if_due(ctx.events, now_ms);
  PORTCULLIS_ASSIGN_OR_RETURN(validation::Verifier * verifier, verifier_for(resource));
  if (Status synced = deny_list_.sync_if_due(services_.db, now_ms, now); !synced.is_ok()) {
    log::warn("revocation deny-list not synced", {{"error", synced.to_string()}});
  }
  validation::RequestFacts facts;
  auto authorization = ctx.request.headers.find("authorization");
  if (authorization != ctx.request.headers.end()) facts.authorization = authorization->second;
  auto proof = ctx.request.headers.find("dpop");
  if (proof != ctx.request.headers.end()) facts.dpop_proof = proof->second;
  facts.method = ctx.request.method;
  // The server answers at its resource's URL only (docs/demo-mcp.md), so that is the htu.
  facts.url = resource.server_url;
  Verdict verdict = verifier->verify(facts, {}, now, cache_.get());
  revoked_ = deny_list_.refuse_if_revoked(verdict) ? "revoked" : "";
  if (!verdict.valid() && verdict.outcome != Outcome::kNoToken) {
    log::info("access token refused",
              {{"reason", verdict.reason}, {"request_id", ctx.request.request_id}});
  }
  return verdict;
}

void Access::record(server::Context& ctx, const Verdict& verdict, const oauth::Resource& resource,
                    const std::vector<std::string>& required) {
  events_.record(verdict, resource.id, format::join_scopes(required), ctx.request.remote_addr,
                 ctx.request.header("user-agent").value_or(""),
                 verdict.valid() ? std::string_view() : std::string_view(revoked_));
}

http::Response refusal(const Verdict& verdict, const oauth::Resource& resource,
                       const std::string& first_scope) {
  const std::string metadata_url = validation::protected_resource_metadata_url(resource.server_url);
  if (verdict.outcome != Outcome::kInsufficientScope) {
    return validation::challenge_response(verdict, metadata_url, {first_scope});
  }
  const std::set<std::string> missing = format::scope_set(verdict.missing_scope);
  std::vector<std::string> wanted;
  for (const oauth::ScopeDef& s : resource.scopes) {
    if (missing.count(s.name) > 0 || verdict.claims->has_scope(s.name)) wanted.push_back(s.name);
  }
  for (const std::string& m : missing) {
    if (resource.find_scope(m) == nullptr) wanted.push_back(m);
  }
  // The body names what the call lacks; the challenge, what to ask for.
  Verdict challenge = verdict;
  challenge.missing_scope = format::join_scopes(wanted);
  http::Response r = http::Response::text(
      403, validation::insufficient_scope_body(verdict.missing_scope), "application/json");
  r.set_header("WWW-Authenticate", validation::www_authenticate(challenge, metadata_url, ""));
  return r;
}

mcp::Caller caller_of(const Verdict& verdict) {
  const validation::AccessClaims& claims = *verdict.claims;
  return mcp::Caller{.subject = claims.sub,
                     .client_id = claims.client_id,
                     .scope = claims.scope,
                     .scopes = {claims.scopes.begin(), claims.scopes.end()}};
}

}  // namespace portcullis::demo_mcp
