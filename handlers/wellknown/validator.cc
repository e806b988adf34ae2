#include "validator.h"

#include <algorithm>
#include <map>
#include <memory>

#include "clients/resources.h"
#include "core/time.h"
#include "discovery/metadata.h"
#include "format/json.h"
#include "format/scope_list.h"
#include "http/document.h"
#include "log/log.h"
#include "validation/challenge.h"
#include "validation/deny_list.h"
#include "validation/dpop_checker.h"
#include "validation/key_cache.h"
#include "validation/token_cache.h"
#include "validation/validation_events.h"
#include "validation/verifier.h"

namespace portcullis::wellknown {
namespace {

using server::Context;
using validation::Outcome;
using validation::Verdict;

// A resource's row is re-read this often, so a changed server URL or a deleted resource is
// noticed without a restart.
constexpr int64_t kResourceRefreshSeconds = 30;

std::string_view gateway_param(const http::Request& request, const std::string& name) {
  auto it = request.gateway_params.find(name);
  return it == request.gateway_params.end() ? std::string_view() : std::string_view(it->second);
}

struct ProtectedResource {
  oauth::Resource resource;
  std::shared_ptr<validation::Verifier> verifier;
  validation::TokenCache cache;
  std::string metadata_url;
  http::Document metadata;  // RFC 9728, rendered when the row is (re-)read
  int64_t loaded_at = 0;
};

class Validator {
 public:
  explicit Validator(server::Services& services)
      : keys_(std::make_shared<validation::KeyRingKeys>(services.keys)),
        deny_list_(services.config.validator_denylist_sync_ms),
        events_(services.config.validator_event_flush_ms),
        // RFC 9449 §7: bound tokens need a fresh proof; jtis go to the cluster-wide cache.
        proofs_(validation::DpopProofChecker::over_replay_cache(
            services.db, services.config.dpop_iat_leeway_seconds)) {}

  Result<http::Response> validate(Context& ctx);
  Result<http::Response> metadata(Context& ctx);

 private:
  Result<ProtectedResource*> resource_for(Context& ctx, int64_t now);

  std::shared_ptr<validation::KeyRingKeys> keys_;
  validation::DenyList deny_list_;
  validation::ValidationEvents events_;
  std::shared_ptr<const validation::DpopProofChecker> proofs_;
  std::map<std::string, std::unique_ptr<ProtectedResource>, std::less<>> resources_;
  // PORTCULLIS_REQUIRED_SCOPES as last split, so the split is not redone per request.
  std::string scopes_text_;
  std::vector<std::string> scopes_;
  std::string scopes_joined_;
};

void render_metadata(Context& ctx, ProtectedResource& target) {
  std::string body =
      json::write(discovery::protected_resource_metadata(ctx.services.config, target.resource));
  if (body != target.metadata.body) {
    target.metadata = http::make_document(std::move(body), "application/json");
  }
}

Result<ProtectedResource*> Validator::resource_for(Context& ctx, int64_t now) {
  const std::string_view id = gateway_param(ctx.request, "PORTCULLIS_RESOURCE_ID");
  if (id.empty()) {
    log::error("validator location has no fastcgi_param PORTCULLIS_RESOURCE_ID");
    return Status::internal("the validator is not configured");
  }
  auto it = resources_.find(id);
  if (it != resources_.end() && now - it->second->loaded_at < kResourceRefreshSeconds) {
    return it->second.get();
  }
  auto loaded = oauth::ResourceStore(ctx.services.db).get(std::string(id));
  if (!loaded) {
    if (loaded.status().code() == Code::kNotFound) {
      if (it != resources_.end()) resources_.erase(it);
      log::error("validator location names an unknown resource", {{"resource_id", id}});
      return Status::internal("the validator is configured with an unknown resource");
    }
    if (it != resources_.end()) return it->second.get();  // store trouble: keep what we have
    return loaded.status();
  }
  if (it != resources_.end() && it->second->resource.server_url == loaded->server_url) {
    it->second->resource = std::move(loaded).value();
    render_metadata(ctx, *it->second);
    it->second->loaded_at = now;
    return it->second.get();
  }
  auto entry = std::make_unique<ProtectedResource>();
  validation::VerifierConfig config;
  config.issuer = loaded->issuer(ctx.services.config);
  config.audience = loaded->server_url;
  PORTCULLIS_ASSIGN_OR_RETURN(entry->verifier,
                              validation::Verifier::create(config, keys_, proofs_));
  entry->metadata_url = validation::protected_resource_metadata_url(loaded->server_url);
  entry->resource = std::move(loaded).value();
  render_metadata(ctx, *entry);
  entry->loaded_at = now;
  ProtectedResource* raw = entry.get();
  resources_.insert_or_assign(std::string(id), std::move(entry));
  return raw;
}

Result<http::Response> Validator::validate(Context& ctx) {
  const int64_t now = unix_now();
  const int64_t now_ms = monotonic_ms();
  events_.drain_if_due(ctx.events, now_ms);
  PORTCULLIS_ASSIGN_OR_RETURN(ProtectedResource * target, resource_for(ctx, now));

  const http::Request& request = ctx.request;
  const std::string_view scopes_text = gateway_param(request, "PORTCULLIS_REQUIRED_SCOPES");
  if (scopes_text != scopes_text_) {
    scopes_text_ = std::string(scopes_text);
    scopes_ = format::scope_list(scopes_text_);
    scopes_joined_ = format::join_scopes(scopes_);
  }
  if (Status synced = deny_list_.sync_if_due(ctx.services.db, now_ms, now); !synced.is_ok()) {
    log::warn("revocation deny-list not synced", {{"error", synced.to_string()}});
  }

  // A CORS preflight never carries credentials (Fetch standard): refusing it would lock
  // browser-based MCP clients out before they can send their token. The upstream answers it.
  if (gateway_param(request, "PORTCULLIS_ORIGINAL_METHOD") == "OPTIONS") {
    http::Response r = http::Response::empty(204);
    r.set_header("X-Accel-Expires", "0");
    return r;
  }
  const auto authorization = request.headers.find("authorization");
  const auto proof = request.headers.find("dpop");
  validation::RequestFacts facts;
  if (authorization != request.headers.end()) facts.authorization = authorization->second;
  if (proof != request.headers.end()) facts.dpop_proof = proof->second;
  facts.method = gateway_param(request, "PORTCULLIS_ORIGINAL_METHOD");
  // htu: the resource's configured origin and the request target, never the Host header.
  std::string_view request_target = gateway_param(request, "PORTCULLIS_ORIGINAL_URI");
  if (request_target.empty()) request_target = gateway_param(request, "PORTCULLIS_ORIGINAL_URL");
  const std::string url = validation::request_url(target->resource.server_url, request_target);
  facts.url = url;
  Verdict verdict = target->verifier->verify(facts, scopes_, now, &target->cache);

  std::string_view failure;
  if (deny_list_.refuse_if_revoked(verdict)) failure = "revoked";
  const auto user_agent = request.headers.find("user-agent");
  events_.record(verdict, target->resource.id, scopes_joined_, request.remote_addr,
                 user_agent == request.headers.end() ? std::string_view() : user_agent->second,
                 failure);

  if (verdict.valid()) {
    const validation::AccessClaims& c = *verdict.claims;
    http::Response r = http::Response::empty(204);
    // For mcp-validate-cached.conf: how long nginx may answer this token by itself. Never past
    // expiry; never for DPoP, whose proofs are per request.
    const int64_t reuse =
        facts.dpop_proof
            ? 0
            : std::max<int64_t>(
                  0, std::min(ctx.services.config.validator_nginx_cache_seconds, c.exp - now));
    r.set_header("X-Accel-Expires", std::to_string(reuse));
    r.set_header("X-Portcullis-Sub", c.sub);
    r.set_header("X-Portcullis-Client-Id", c.client_id);
    r.set_header("X-Portcullis-Scope", c.scope);
    if (!c.org_id.empty()) r.set_header("X-Portcullis-Org-Id", c.org_id);
    if (!c.email.empty()) r.set_header("X-Portcullis-Email", c.email);
    r.set_header("X-Portcullis-Token-Type",
                 verdict.scheme == validation::TokenScheme::kDPoP ? "DPoP" : "Bearer");
    return r;
  }
  if (verdict.outcome == Outcome::kUnavailable) {
    log::warn("validator cannot check tokens", {{"reason", verdict.reason}});
  }
  http::Response r = validation::challenge_response(verdict, target->metadata_url, scopes_);
  r.set_header("X-Accel-Expires", "0");
  if (verdict.outcome == Outcome::kInsufficientScope) {
    r.set_header("X-Portcullis-Missing-Scope", verdict.missing_scope);
  }
  return r;
}

Result<http::Response> Validator::metadata(Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(ProtectedResource * target, resource_for(ctx, unix_now()));
  return http::serve_document(ctx.request, target->metadata, "public, max-age=300");
}

}  // namespace

void install_validator_routes(server::App& app) {
  // One per worker process (install_routes runs after the fork).
  auto validator = std::make_shared<Validator>(app.services());
  app.add("GET", "/__portcullis/validate",
          server::Route{.handler = [validator](Context& ctx) { return validator->validate(ctx); },
                        .access_log = false});
  app.add("GET", "/__portcullis/protected-resource-metadata",
          server::Route{.handler = [validator](Context& ctx) { return validator->metadata(ctx); },
                        .cors = true});
}

}  // namespace portcullis::wellknown
