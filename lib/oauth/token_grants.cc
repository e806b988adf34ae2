#include "oauth/token_grants.h"

#include <algorithm>
#include <set>

#include "clients/clients.h"
#include "clients/resources.h"
#include "core/ids.h"
#include "core/telemetry.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "events/recorder.h"
#include "format/scope_list.h"
#include "jose/jws_key.h"
#include "log/log.h"
#include "oauth/pkce.h"
#include "tokens/codes.h"
#include "tokens/grants.h"

namespace portcullis::oauth {
namespace {

// grants.scope (sql/0002_oauth.sql): the most a grant's scope, and so a narrowing of it, holds.
constexpr size_t kMaxGrantScopeChars = 2000;

Status invalid_grant(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_grant");
}
Status invalid_request(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_request");
}

// RFC 9449 §5: a public client's refresh tokens are bound to its DPoP key, since nothing else
// ties them to the client; a confidential client authenticates at every refresh, so only its
// access tokens are bound.
std::string refresh_binding(const ClientInfo& client, const std::string& dpop_jkt) {
  return client.is_public() ? dpop_jkt : std::string();
}

// A code or grant bound to a key is redeemed only with a proof made with that key.
Status check_dpop_binding(const std::string& bound_jkt, const std::string& dpop_jkt,
                          const char* what) {
  if (bound_jkt.empty() || bound_jkt == dpop_jkt) return Status::ok();
  if (dpop_jkt.empty()) return invalid_grant(std::string(what) + " is DPoP-bound: send a proof");
  return invalid_grant(std::string(what) + " is bound to another DPoP key");
}

// A user token for a grant, its jti naming the grant (access_token.h).
// `jti_random`: the jti's random part when it was chosen before (AccessTokenRequest).
Result<AccessToken> mint_for_grant(server::Services& services, const Resource& resource,
                                   const Grant& grant, const std::string& scope, int64_t now,
                                   const std::string& dpop_jkt, const std::string& jti_random) {
  AccessTokenRequest request;
  request.issuer = resource.issuer(services.config);
  request.subject = grant.user_id;
  request.audience = resource.server_url;
  request.client_id = grant.client_id;
  request.scope = scope;
  request.lifetime_seconds = resource.access_token_ttl_seconds;
  request.auth_time = grant.auth_time;
  request.organization_id = grant.organization_id;
  request.grant_id = grant.id;
  request.dpop_jkt = dpop_jkt;
  request.alg = resource.access_token_signing_alg;
  request.jti_random = jti_random;
  return mint_access_token(services.keys, request, now);
}

// The resource a token is minted for, as the joined read gave it, and the request's RFC 8707
// `resource` parameter (when sent) checked against it.
Result<Resource> token_resource(const GrantResource& granted, const http::Form& form,
                                const char* mismatch) {
  Resource resource;
  resource.id = granted.id;
  resource.server_url = granted.server_url;
  resource.access_token_ttl_seconds = granted.access_token_ttl_seconds;
  resource.access_token_signing_alg = granted.access_token_signing_alg;
  if (auto indicator = form.get("resource");
      indicator && !resource_indicator_matches(resource, *indicator)) {
    return Status::invalid_argument(mismatch).with_reason("invalid_target");
  }
  return resource;
}

events::Event token_event(server::Context& ctx, const events::EventType& type, const Grant& grant) {
  events::Event e = ctx.event(type);
  e.user_id = grant.user_id;
  e.client_id = grant.client_id;
  e.resource_id = grant.resource_id;
  e.data["grant_id"] = grant.id;
  return e;
}

// What the event of a successful grant says of its request: the grant type, and the access
// token's type and key.
void describe_request(events::Event& e, const char* grant_type, const std::string& dpop_jkt) {
  e.data["grant_type"] = grant_type;
  e.data["token_type"] = dpop_jkt.empty() ? "Bearer" : "DPoP";
  if (!dpop_jkt.empty()) e.data["dpop_jkt"] = dpop_jkt;
}

// The event of a successful grant (token.issued, token.refreshed), stamped: it is written with
// the grant's refresh token, in the same statement (GrantStore, sql/0090_event_outbox.sql).
events::Event tokens_event(server::Context& ctx, const Grant& grant, const UserTokens& out,
                           const events::EventType& type, const char* grant_type,
                           const std::string& dpop_jkt) {
  events::Event e = token_event(ctx, type, grant);
  describe_request(e, grant_type, dpop_jkt);
  e.data["scope"] = out.scope;
  e.data["jti"] = out.access_token.jti;
  if (!grant.dpop_jkt.empty()) e.data["refresh_token_dpop_bound"] = true;
  events::Recorder::stamp(e);
  return e;
}

// After a successful grant: its counter and the client's last use (which keeps DCR clients
// from being pruned while they are in use).
void tokens_issued(server::Context& ctx, const ClientInfo& client, const char* grant_type) {
  telemetry::count(std::string_view(grant_type) == "refresh_token"
                       ? telemetry::Counter::kTokensRefreshed
                       : telemetry::Counter::kTokensIssuedCode);
  (void)ClientStore(ctx.services.db).touch(client.client_id);
}

// Revokes a grant and writes the event that says why in one transaction (the outbox of
// docs/events.md): a rare path (a replayed code, a reused refresh token), not held to the
// round trips of a grant.
Status revoke_with_event(server::Context& ctx, GrantStore& grants, const std::string& grant_id,
                         const char* reason, int64_t now, events::Event event) {
  return ctx.change_with_event([&] { return grants.revoke(grant_id, reason, now); },
                               std::move(event));
}

}  // namespace

Result<UserTokens> redeem_authorization_code(server::Context& ctx,
                                             const AuthenticatedWithCode& exchange,
                                             const http::Form& form, int64_t now,
                                             const std::string& dpop_jkt) {
  const ClientInfo& client = exchange.client;
  if (!client.allows_grant("authorization_code")) {
    return Status::invalid_argument("this client may not use the authorization code grant")
        .with_reason("unauthorized_client");
  }
  std::string code = form.get_or("code", "");
  std::string verifier = form.get_or("code_verifier", "");
  if (code.empty()) return invalid_request("code is required");
  if (verifier.empty()) return invalid_request("code_verifier is required (PKCE)");
  if (!is_valid_code_verifier(verifier)) {
    return invalid_request("code_verifier must be 43 to 128 unreserved characters");
  }
  server::Services& services = ctx.services;
  CodeStore codes(services.db);
  GrantStore grants(services.db);

  // Round trips: one read (the client, and the code with its user's state and its resource:
  // authenticate_client_with_code), then one CALL whose transaction claims the code and stores
  // the grant, its refresh token and token.issued; the access token is signed before it, so no
  // row stays locked across the signature. An exchange is two round trips.
  auto replay = [&](const std::string& grant_id) -> Status {
    // A second use: the code leaked. Everything issued from it dies (RFC 9700 §4.5).
    if (!grant_id.empty()) {
      events::Event e = ctx.event(events::type::kTokenRevoked);
      e.client_id = client.client_id;
      e.data["grant_id"] = grant_id;
      e.data["reason"] = "code_replay";
      PORTCULLIS_RETURN_IF_ERROR(
          revoke_with_event(ctx, grants, grant_id, "code_replay", now, std::move(e)));
      telemetry::count(telemetry::Counter::kCodeReplayDetected);
    }
    return invalid_grant("the code was already used; tokens issued from it are revoked");
  };
  const std::optional<StoredCode>& stored = exchange.code;
  if (!stored) return invalid_grant("unknown code");
  const CodeBinding& b = stored->binding;
  if (stored->used_at) return replay(stored->grant_id);
  if (stored->expires_at <= now) return invalid_grant("the code has expired");
  if (b.client_id != client.client_id)
    return invalid_grant("the code was issued to another client");
  if (auto redirect = form.get("redirect_uri")) {
    if (*redirect != b.redirect_uri)
      return invalid_grant("redirect_uri differs from the authorization request's");
  } else if (client.redirect_uris.size() != 1) {
    return invalid_request("redirect_uri is required");
  }
  if (!verifier_matches_challenge(verifier, b.code_challenge)) {
    return invalid_grant("code_verifier does not match the code_challenge");
  }
  PORTCULLIS_RETURN_IF_ERROR(check_dpop_binding(b.dpop_jkt, dpop_jkt, "the code"));
  if (!stored->resource) return Status::not_found("the resource no longer exists");
  PORTCULLIS_ASSIGN_OR_RETURN(
      const Resource resource,
      token_resource(*stored->resource, form, "resource differs from the authorization request's"));
  if (!stored->user_active) return invalid_grant("the user no longer exists");
  if (!*stored->user_active) return invalid_grant("the user is deactivated");

  Grant grant;
  grant.user_id = b.user_id;
  grant.client_id = b.client_id;
  grant.resource_id = b.resource_id;
  grant.scope = b.scope;
  grant.auth_time = b.auth_time;
  grant.organization_id = b.organization_id;
  grant.absolute_expires_at = now + services.config.refresh_token_absolute_seconds;
  grant.dpop_jkt = refresh_binding(client, dpop_jkt);
  grant.id = new_id("grt_");  // named by the access token, signed before the transaction
  UserTokens out;
  PORTCULLIS_ASSIGN_OR_RETURN(
      out.access_token, mint_for_grant(services, resource, grant, b.scope, now, dpop_jkt, ""));
  out.scope = grant.scope;
  // token.issued is written in the transaction that stores the grant, with the refresh token
  // (the same CALL; docs/events.md, "Recording").
  const events::Event issued =
      tokens_event(ctx, grant, out, events::type::kTokenIssued, "authorization_code", dpop_jkt);
  // The claim of the code, the grant, its refresh token and token.issued: one CALL, one
  // transaction (GrantStore::create_from_code, sql/0091_code_exchange.sql).
  auto stored_grant =
      grants.create_from_code(grant, code, now, services.config.refresh_token_idle_seconds,
                              client.allows_grant("refresh_token"), issued);
  if (!stored_grant) {
    if (stored_grant.status().code() != Code::kAlreadyExists) return stored_grant.status();
    // Another exchange of this code committed first (here or on another node): a replay.
    auto winner = codes.find(code);
    return replay(winner ? winner->grant_id : std::string());
  }
  out.refresh_token = std::move(stored_grant).value();
  out.grant_id = grant.id;
  out.user_id = grant.user_id;
  out.resource_id = grant.resource_id;
  tokens_issued(ctx, client, "authorization_code");
  return out;
}

Result<UserTokens> redeem_refresh_token(server::Context& ctx, const ClientInfo& client,
                                        const http::Form& form, int64_t now,
                                        const std::string& dpop_jkt) {
  if (!client.allows_grant("refresh_token")) {
    return Status::invalid_argument("this client may not use refresh tokens")
        .with_reason("unauthorized_client");
  }
  std::string token = form.get_or("refresh_token", "");
  if (token.empty()) return invalid_request("refresh_token is required");
  server::Services& services = ctx.services;
  GrantStore grants(services.db);

  // One statement (GrantStore::refresh, sql/0092_refresh_grant.sql): it reads the presented
  // token with its grant, user and resource, makes the checks below, and when they pass it stores
  // the successor and token.refreshed (naming the jti chosen here) in one transaction; the access
  // token is signed after it. When it refused, nothing was written and the checks below decide
  // from the state it read, as they did from the read alone: the same answers. Only what it could
  // not settle (a key ring without a key for the resource's algorithm, a scope the statement
  // cannot sort) is signed first and rotated by a second statement, as before.
  RefreshRequest request;
  request.token = token;
  request.client_id = client.client_id;
  request.now = now;
  request.dpop_jkt = dpop_jkt;
  if (auto indicator = form.get("resource")) {
    const std::optional<std::string> canonical = canonical_server_url(*indicator);
    request.resource_key = canonical ? crypto::sha256(*canonical) : std::string();
  }
  std::optional<std::set<std::string>> requested;
  if (auto scope = form.get("scope"); scope && !scope->empty()) {
    requested = format::scope_set(*scope);
    request.scope = format::join_scopes(*requested);
  }
  for (jose::JwsAlg alg : jose::kAccessTokenAlgs) {
    if (!services.keys.signer(now, alg)) continue;
    if (!request.signing_algs.empty()) request.signing_algs += ' ';
    request.signing_algs += jose::alg_name(alg);
  }
  request.idle_seconds = services.config.refresh_token_idle_seconds;
  request.jti_random = crypto::random_token(16);
  events::Event refreshed = ctx.event(events::type::kTokenRefreshed);
  refreshed.client_id = client.client_id;
  describe_request(refreshed, "refresh_token", dpop_jkt);
  events::Recorder::stamp(refreshed);
  // A narrowing names some of the grant's names, so it is never longer than grants.scope holds:
  // a longer scope is refused below, and the statement, sent no such text, only reads.
  if (!request.scope || request.scope->size() <= kMaxGrantScopeChars) {
    request.event = &refreshed;
  } else {
    request.scope.reset();
  }

  auto presented = grants.refresh(request);
  if (!presented) {
    if (presented.status().code() == Code::kNotFound) return invalid_grant("unknown refresh token");
    return presented.status();
  }
  const RefreshTokenState& state = presented->state;
  const Grant& grant = state.grant;
  const bool rotated = presented->successor.has_value();
  auto reuse_detected = [&]() -> Status {
    // A rotated-out token came back: one of the two holders is not the client.
    telemetry::count(telemetry::Counter::kRefreshReuseDetected);
    PORTCULLIS_RETURN_IF_ERROR(
        revoke_with_event(ctx, grants, grant.id, "refresh_reuse", now,
                          token_event(ctx, events::type::kTokenRefreshReuseDetected, grant)));
    return invalid_grant("the refresh token was already used; the grant is revoked");
  };
  // The checks, in the order of the answers (RFC 6749 §5.2): the resource to mint for, or why not.
  auto decide = [&]() -> Result<Resource> {
    if (grant.client_id != client.client_id) {
      return invalid_grant("the refresh token was issued to another client");
    }
    if (grant.revoked_at) return invalid_grant("the grant was revoked");
    if (state.rotated) return reuse_detected();
    if (state.expires_at <= now || grant.absolute_expires_at <= now) {
      return invalid_grant("the refresh token has expired");
    }
    PORTCULLIS_RETURN_IF_ERROR(check_dpop_binding(grant.dpop_jkt, dpop_jkt, "the refresh token"));
    if (!state.user_active) return invalid_grant("the user no longer exists");
    if (!*state.user_active) return invalid_grant("the user is deactivated");
    if (!state.resource) return invalid_grant("the resource no longer exists");
    PORTCULLIS_ASSIGN_OR_RETURN(
        Resource resource,
        token_resource(*state.resource, form, "resource differs from the grant's"));
    if (requested) {
      const std::set<std::string> granted = format::scope_set(grant.scope);
      for (const auto& s : *requested) {
        if (!granted.count(s)) {
          return Status::invalid_argument("scope " + s +
                                          " was not granted; a refresh can only narrow")
              .with_reason("invalid_scope");
        }
      }
    }
    return resource;
  };
  auto resource = decide();
  if (!resource) {
    if (rotated) {
      // The statement checks all of the above: a rotation it stored is never refused here.
      log::error("a refresh rotated by its statement was refused after it",
                 {{"reason", resource.status().reason()}});
    }
    return resource.status();
  }
  UserTokens out;
  out.scope = format::join_scopes(requested ? *requested : format::scope_set(grant.scope));
  if (rotated) {
    // Rotated, and token.refreshed written naming this jti: the signature comes after. The
    // statement stored the rotation only if the key ring could sign for the resource.
    PORTCULLIS_ASSIGN_OR_RETURN(
        out.access_token,
        mint_for_grant(services, *resource, grant, out.scope, now, dpop_jkt, request.jti_random));
    out.refresh_token = std::move(presented->successor).value();
  } else {
    // Signed before the rotation is stored, so a signing failure leaves the presented token live.
    PORTCULLIS_ASSIGN_OR_RETURN(
        out.access_token, mint_for_grant(services, *resource, grant, out.scope, now, dpop_jkt, ""));
    const events::Event event =
        tokens_event(ctx, grant, out, events::type::kTokenRefreshed, "refresh_token", dpop_jkt);
    auto successor = grants.rotate_refresh_token(
        grant, token, now, services.config.refresh_token_idle_seconds, &event);
    if (!successor) {
      // Another request rotated this token between our read and our write: reuse.
      if (successor.status().code() == Code::kAlreadyExists) return reuse_detected();
      return successor.status();
    }
    out.refresh_token = std::move(successor).value();
  }
  out.grant_id = grant.id;
  out.user_id = grant.user_id;
  out.resource_id = grant.resource_id;
  tokens_issued(ctx, client, "refresh_token");
  return out;
}

}  // namespace portcullis::oauth
