#include "oauth/token_grants.h"

#include <algorithm>
#include <set>

#include "clients/clients.h"
#include "clients/resource_cache.h"
#include "clients/resources.h"
#include "core/ids.h"
#include "core/telemetry.h"
#include "crypto/compare.h"
#include "events/recorder.h"
#include "format/scope_list.h"
#include "oauth/pkce.h"
#include "tokens/codes.h"
#include "tokens/grants.h"
#include "tokens/sealed_code.h"
#include "tokens/sealed_refresh.h"

namespace portcullis::oauth {
namespace {

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
Result<AccessToken> mint_for_grant(server::Services& services, const Resource& resource,
                                   const Grant& grant, const std::string& scope, int64_t now,
                                   const std::string& dpop_jkt) {
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

// The event of a successful grant (token.issued, token.refreshed), stamped: it is written with
// the grant's refresh token, in the same statement (GrantStore, sql/0090_event_outbox.sql).
events::Event tokens_event(server::Context& ctx, const Grant& grant, const UserTokens& out,
                           const events::EventType& type, const char* grant_type,
                           const std::string& dpop_jkt) {
  events::Event e = token_event(ctx, type, grant);
  e.data["grant_type"] = grant_type;
  e.data["scope"] = out.scope;
  e.data["jti"] = out.access_token.jti;
  e.data["token_type"] = dpop_jkt.empty() ? "Bearer" : "DPoP";
  if (!dpop_jkt.empty()) e.data["dpop_jkt"] = dpop_jkt;
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

// What a grant is decided on: the opened sealed code or refresh token alone, with this worker's
// copies of the client and resource (opened_refresh_state, redeem_authorization_code_alone), or
// what the store holds (the exchange's read of the code's state, GrantStore::find_refresh_token).
enum class DecidedOn { kTokenAlone, kStore };

// The resource a token is minted for as this worker's copy has it (clients/resource_cache.h):
// NotFound when it is gone.
Result<GrantResource> cached_grant_resource(server::Context& ctx, const std::string& resource_id,
                                            int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(const Resource resource, ResourceCache::of_this_worker().get(
                                                           ctx.services.db, resource_id, now));
  return GrantResource{.id = resource.id,
                       .server_url = resource.server_url,
                       .access_token_ttl_seconds = resource.access_token_ttl_seconds,
                       .access_token_signing_alg = resource.access_token_signing_alg};
}

// A code exchange decided on `state`: the checks in the order that gives each refusal its
// message, the access token signed, then the one write (GrantStore::create_from_code). On the
// code alone the client is this worker's copy and the state is the opened code's alone (unused,
// its user active, its resource this worker's copy), and the write checks user, client and
// resource itself: any refusal, and a write that inserted nothing, is nullopt instead, for the
// caller to read the client with the code's state and decide again on what the store holds; so
// a refusal's answer, and a replay's revocation, never rest on the code and the copies alone.
// On the store, always a value.
std::optional<Result<UserTokens>> exchange_code(server::Context& ctx, const ClientInfo& client,
                                                const std::optional<SealedCode>& code,
                                                const CodeState& state, const http::Form& form,
                                                int64_t now, const std::string& dpop_jkt,
                                                DecidedOn basis) {
  const bool alone = basis == DecidedOn::kTokenAlone;
  auto refuse = [&](Status refusal) -> std::optional<Result<UserTokens>> {
    if (alone) return std::nullopt;
    return Result<UserTokens>(std::move(refusal));
  };
  if (!client.allows_grant("authorization_code")) {
    return refuse(Status::invalid_argument("this client may not use the authorization code grant")
                      .with_reason("unauthorized_client"));
  }
  const std::string verifier = form.get_or("code_verifier", "");
  if (form.get_or("code", "").empty()) return refuse(invalid_request("code is required"));
  if (verifier.empty()) return refuse(invalid_request("code_verifier is required (PKCE)"));
  if (!is_valid_code_verifier(verifier)) {
    return refuse(invalid_request("code_verifier must be 43 to 128 unreserved characters"));
  }
  server::Services& services = ctx.services;
  GrantStore grants(services.db);

  // The code is stored nowhere (tokens/sealed_code.h): its grant's primary key makes it
  // single-use.
  auto replay = [&](const std::string& grant_id) -> Result<UserTokens> {
    // A second use: the code leaked. Everything issued from it dies (RFC 9700 §4.5).
    events::Event e = ctx.event(events::type::kTokenRevoked);
    e.client_id = client.client_id;
    e.data["grant_id"] = grant_id;
    e.data["reason"] = "code_replay";
    PORTCULLIS_RETURN_IF_ERROR(
        revoke_with_event(ctx, grants, grant_id, "code_replay", now, std::move(e)));
    telemetry::count(telemetry::Counter::kCodeReplayDetected);
    return invalid_grant("the code was already used; tokens issued from it are revoked");
  };
  // A code that does not open is unknown, whatever made it so: one answer.
  if (!code) return refuse(invalid_grant("unknown code"));
  const SealedCode& c = *code;
  // First, so that a replay revokes whatever else is wrong with it (never from the code alone).
  if (state.used) return replay(c.grant_id);
  if (c.expires_at <= now) return refuse(invalid_grant("the code has expired"));
  if (!crypto::constant_time_equals(c.client_digest, binding_digest(client.client_id))) {
    return refuse(invalid_grant("the code was issued to another client"));
  }
  if (auto redirect = form.get("redirect_uri")) {
    if (!crypto::constant_time_equals(c.redirect_uri_digest, binding_digest(*redirect))) {
      return refuse(invalid_grant("redirect_uri differs from the authorization request's"));
    }
  } else if (client.redirect_uris.size() != 1) {
    return refuse(invalid_request("redirect_uri is required"));
  }
  if (!verifier_matches_challenge(verifier, c.code_challenge)) {
    return refuse(invalid_grant("code_verifier does not match the code_challenge"));
  }
  if (Status bound = check_dpop_binding(c.dpop_jkt, dpop_jkt, "the code"); !bound.is_ok()) {
    return refuse(std::move(bound));
  }
  if (!state.resource) return refuse(invalid_grant("the resource no longer exists"));
  auto resource =
      token_resource(*state.resource, form, "resource differs from the authorization request's");
  if (!resource) return refuse(resource.status());
  if (!state.user_active) return refuse(invalid_grant("the user no longer exists"));
  if (!*state.user_active) return refuse(invalid_grant("the user is deactivated"));

  // The grant's id is the code's: named by the access token, signed before the CALL.
  Grant grant{.id = c.grant_id,
              .user_id = c.user_id,
              .client_id = client.client_id,
              .resource_id = c.resource_id,
              .scope = c.scope,
              .auth_time = c.auth_time,
              .organization_id = c.organization_id,
              .absolute_expires_at = now + services.config.refresh_token_absolute_seconds,
              .revoked_at = std::nullopt,
              .dpop_jkt = refresh_binding(client, dpop_jkt)};
  UserTokens out;
  PORTCULLIS_ASSIGN_OR_RETURN(out.access_token,
                              mint_for_grant(services, *resource, grant, c.scope, now, dpop_jkt));
  out.scope = grant.scope;
  // token.issued is written in the transaction that stores the grant (the same CALL;
  // docs/events.md, "Recording").
  const events::Event issued =
      tokens_event(ctx, grant, out, events::type::kTokenIssued, "authorization_code", dpop_jkt);
  // The grant, its refresh token and token.issued: one CALL, one transaction
  // (GrantStore::create_from_code; alone, the same CALL checks what the read would have).
  auto stored_grant = grants.create_from_code(
      services.master_key, grant, now, services.config.refresh_token_idle_seconds,
      client.allows_grant("refresh_token"), issued,
      alone ? CodeGrantChecks::kInTheWrite : CodeGrantChecks::kNone);
  if (!stored_grant) {
    if (stored_grant.status().code() != Code::kAlreadyExists) {
      return Result<UserTokens>(stored_grant.status());
    }
    // Alone, the store tells why (a used code, a user, client or resource gone); after a read,
    // another exchange of this code committed its grant first (here or on another node).
    return alone ? std::nullopt : std::optional(replay(c.grant_id));
  }
  out.refresh_token = std::move(stored_grant).value();
  out.grant_id = grant.id;
  out.user_id = grant.user_id;
  out.resource_id = grant.resource_id;
  tokens_issued(ctx, client, "authorization_code");
  return out;
}

}  // namespace

Result<UserTokens> redeem_authorization_code(server::Context& ctx,
                                             const AuthenticatedWithCode& exchange,
                                             const http::Form& form, int64_t now,
                                             const std::string& dpop_jkt) {
  // Round trips: the read of authenticate_client_with_code (the client, and the grant, user and
  // resource the opened code names), then one CALL.
  return *exchange_code(ctx, exchange.client, exchange.code, exchange.state, form, now, dpop_jkt,
                        DecidedOn::kStore);
}

std::optional<Result<UserTokens>> redeem_authorization_code_alone(
    server::Context& ctx, const ClientInfo& client, const std::optional<SealedCode>& code,
    const http::Form& form, int64_t now, const std::string& dpop_jkt) {
  if (!code) return std::nullopt;
  auto resource = cached_grant_resource(ctx, code->resource_id, now);
  if (!resource) {
    if (resource.status().code() == Code::kNotFound) return std::nullopt;
    return Result<UserTokens>(resource.status());
  }
  const CodeState state{
      .used = false, .user_active = true, .resource = std::move(resource).value()};
  return exchange_code(ctx, client, code, state, form, now, dpop_jkt, DecidedOn::kTokenAlone);
}

namespace {

// A refresh decided on `presented`: the checks in the order that gives each refusal its message,
// the access token signed, then the one write (grants.h). On the token alone, any refusal, and a
// rotation that matches nothing, is nullopt instead: the caller reads the grant and decides
// again on what the store holds, so a refusal's answer, and a reuse's revocation, never rest on
// the token alone. On the store, always a value.
std::optional<Result<UserTokens>> refresh_grant(server::Context& ctx, const ClientInfo& client,
                                                const http::Form& form, int64_t now,
                                                const std::string& dpop_jkt, GrantStore& grants,
                                                const RefreshTokenState& presented,
                                                const std::string& token, DecidedOn basis) {
  server::Services& services = ctx.services;
  const Grant& grant = presented.grant;
  const bool from_token = basis == DecidedOn::kTokenAlone;
  auto refuse = [&](Status refusal) -> std::optional<Result<UserTokens>> {
    if (from_token) return std::nullopt;
    return Result<UserTokens>(std::move(refusal));
  };
  auto reuse_detected = [&]() -> Result<UserTokens> {
    // A rotated-out token came back: one of the two holders is not the client.
    telemetry::count(telemetry::Counter::kRefreshReuseDetected);
    PORTCULLIS_RETURN_IF_ERROR(
        revoke_with_event(ctx, grants, grant.id, "refresh_reuse", now,
                          token_event(ctx, events::type::kTokenRefreshReuseDetected, grant)));
    return invalid_grant("the refresh token was already used; the grant is revoked");
  };
  if (grant.client_id != client.client_id) {
    return refuse(invalid_grant("the refresh token was issued to another client"));
  }
  if (grant.revoked_at) return refuse(invalid_grant("the grant was revoked"));
  if (presented.rotated) return reuse_detected();  // never from the token alone
  if (presented.expires_at <= now || grant.absolute_expires_at <= now) {
    return refuse(invalid_grant("the refresh token has expired"));
  }
  if (Status bound = check_dpop_binding(grant.dpop_jkt, dpop_jkt, "the refresh token");
      !bound.is_ok()) {
    return refuse(std::move(bound));
  }
  if (!presented.user_active) return refuse(invalid_grant("the user no longer exists"));
  if (!*presented.user_active) return refuse(invalid_grant("the user is deactivated"));
  if (!presented.resource) return refuse(invalid_grant("the resource no longer exists"));
  auto resource = token_resource(*presented.resource, form, "resource differs from the grant's");
  if (!resource) return refuse(resource.status());
  std::set<std::string> granted = format::scope_set(grant.scope);
  std::set<std::string> scopes = granted;
  if (auto requested = form.get("scope"); requested && !requested->empty()) {
    scopes = format::scope_set(*requested);
    for (const auto& s : scopes) {
      if (!granted.count(s)) {
        return refuse(
            Status::invalid_argument("scope " + s + " was not granted; a refresh can only narrow")
                .with_reason("invalid_scope"));
      }
    }
  }
  UserTokens out;
  out.scope = format::join_scopes(scopes);
  // Signed before the rotation is stored, so a signing failure leaves the presented token live.
  PORTCULLIS_ASSIGN_OR_RETURN(out.access_token,
                              mint_for_grant(services, *resource, grant, out.scope, now, dpop_jkt));
  // The successor and token.refreshed in one statement (GrantStore).
  const events::Event refreshed =
      tokens_event(ctx, grant, out, events::type::kTokenRefreshed, "refresh_token", dpop_jkt);
  auto rotated =
      grants.rotate_refresh_token(services.master_key, presented, token, now,
                                  services.config.refresh_token_idle_seconds, &refreshed);
  if (!rotated) {
    // Matched nothing: from the token alone, the grant's row tells why; after a read, another
    // request rotated this token between our read and our write: reuse.
    if (rotated.status().code() == Code::kAlreadyExists) {
      return from_token ? std::nullopt : std::optional(reuse_detected());
    }
    return Result<UserTokens>(rotated.status());
  }
  out.refresh_token = std::move(rotated).value();
  out.grant_id = grant.id;
  out.user_id = grant.user_id;
  out.resource_id = grant.resource_id;
  tokens_issued(ctx, client, "refresh_token");
  return out;
}

// A sealed token's refresh from the token alone and the resource cache (clients/
// resource_cache.h): nullopt when it needs the grant read (refused, or not rotated).
std::optional<Result<UserTokens>> refresh_from_token(server::Context& ctx, const ClientInfo& client,
                                                     const http::Form& form, int64_t now,
                                                     const std::string& dpop_jkt,
                                                     GrantStore& grants,
                                                     const SealedRefresh& sealed,
                                                     const std::string& token) {
  std::optional<RefreshTokenState> state = opened_refresh_state(sealed, client.client_id);
  if (!state) return std::nullopt;
  auto resource = cached_grant_resource(ctx, state->grant.resource_id, now);
  if (!resource) {
    if (resource.status().code() == Code::kNotFound) return std::nullopt;
    return Result<UserTokens>(resource.status());
  }
  state->resource = std::move(resource).value();
  return refresh_grant(ctx, client, form, now, dpop_jkt, grants, *state, token,
                       DecidedOn::kTokenAlone);
}

}  // namespace

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

  // A sealed token: one write and no read when it refreshes (grants.h). A token that does not
  // open is unknown: it revokes nothing.
  std::optional<SealedRefresh> sealed;
  if (!is_stored_refresh_token(token)) {
    sealed = open_refresh_token(services.master_key, token);
    if (!sealed) return invalid_grant("unknown refresh token");
    if (auto decided =
            refresh_from_token(ctx, client, form, now, dpop_jkt, grants, *sealed, token)) {
      return std::move(*decided);
    }
  }
  // A stored token, or a sealed one refused or not rotated: one read, then the same decision on
  // what the store holds (a reuse revokes the grant), and the write when it refreshes.
  auto presented = sealed ? grants.find_sealed_refresh_token(*sealed)
                          : grants.find_refresh_token(services.master_key, token);
  if (!presented) {
    if (presented.status().code() == Code::kNotFound) return invalid_grant("unknown refresh token");
    return presented.status();
  }
  return *refresh_grant(ctx, client, form, now, dpop_jkt, grants, *presented, token,
                        DecidedOn::kStore);
}

}  // namespace portcullis::oauth
