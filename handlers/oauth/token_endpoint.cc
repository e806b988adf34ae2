#include "token_endpoint.h"

#include <optional>

#include "core/telemetry.h"
#include "core/time.h"
#include "crypto/base64.h"
#include "crypto/hash.h"
#include "dpop/proof.h"
#include "dpop/replay_cache.h"
#include "oauth/client_auth.h"
#include "oauth/client_credentials.h"
#include "oauth/token_grants.h"
#include "ratelimit/limiter.h"
#include "tokens/sealed_code.h"

namespace portcullis::oauth_worker {
namespace {

Status invalid_request(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_request");
}

http::Response no_store_json(const Json::Value& body) {
  http::Response r = http::Response::json(200, body);
  r.set_header("Cache-Control", "no-store");
  r.set_header("Pragma", "no-cache");
  return r;
}

// RFC 6749 §5.2: invalid_client is a 401, with a Basic challenge when the client tried Basic.
http::Response client_error(const Status& status, const oauth::ClientCredentials& credentials) {
  return oauth::invalid_client_response(credentials, status.message());
}

bool is_client_error(const Status& st) {
  return st.reason() == "invalid_client" || st.code() == Code::kUnauthenticated;
}

// RFC 9449 §5: the DPoP proof of a token request, checked before any grant is looked at. Empty
// when the request has no DPoP header (a Bearer token is issued), else the proof key's
// thumbprint. A bad or replayed proof is 400 invalid_dpop_proof. Only this path touches the
// replay cache, so requests without a proof pay nothing for DPoP.
Result<std::string> dpop_key(server::Context& ctx, int64_t now) {
  std::optional<std::string> header = ctx.request.header("dpop");
  if (!header) return std::string();
  const config::Config& config = ctx.services.config;
  dpop::ProofRequest expected;
  expected.method = ctx.request.method;
  const std::string url = config.base_url + "/oauth/token";
  expected.url = url;
  expected.now = now;
  expected.iat_leeway_seconds = config.dpop_iat_leeway_seconds;
  PORTCULLIS_ASSIGN_OR_RETURN(dpop::VerifiedProof proof, dpop::verify_proof(*header, expected));
  PORTCULLIS_RETURN_IF_ERROR(dpop::ReplayCache(ctx.services.db).remember(proof));
  return std::move(proof.jkt);
}

const char* token_type(const std::string& dpop_jkt) {
  return dpop_jkt.empty() ? "Bearer" : "DPoP";
}

Result<http::Response> user_token_response(const Result<oauth::UserTokens>& tokens, int64_t now,
                                           const std::string& dpop_jkt) {
  if (!tokens) return tokens.status();
  Json::Value body(Json::objectValue);
  body["access_token"] = tokens->access_token.jwt;
  body["token_type"] = token_type(dpop_jkt);
  body["expires_in"] = static_cast<Json::Int64>(tokens->access_token.expires_at - now);
  body["scope"] = tokens->scope;
  if (tokens->refresh_token) body["refresh_token"] = *tokens->refresh_token;
  return no_store_json(body);
}

// 1,200 token requests a minute per client (contract §0), shared by every worker and node. A
// request counts once, however many times it authenticates its client: the code exchange does
// twice when the exchange decided without a read falls back to the read.
class TokenRateLimit {
 public:
  TokenRateLimit(server::Context& ctx, int64_t now) : ctx_(ctx), now_(now) {}

  // The request counted against `client_id` (the authenticated client's) unless it already
  // was; 429 past the limit.
  Status count_once(const std::string& client_id) {
    if (counted_) return Status::ok();
    counted_ = true;
    ratelimit::Limiter limiter(ctx_.services.db);
    // Client ids can be long URLs: the bucket is a digest of the id.
    std::string bucket =
        "token:" + crypto::base64url_encode(crypto::sha256(client_id)).substr(0, 32);
    auto decision =
        limiter.hit(bucket, ctx_.services.config.rate_limits.token_per_minute_per_client, 60, now_);
    if (!decision) return Status::ok();  // the store is in trouble; the grant itself will say so
    if (!decision->allowed) return ratelimit::too_many_requests(*decision, "token requests");
    return Status::ok();
  }

 private:
  server::Context& ctx_;
  const int64_t now_;
  bool counted_ = false;
};

}  // namespace

static Result<http::Response> answer_token_request(server::Context& ctx);

Result<http::Response> token_endpoint(server::Context& ctx) {
  auto response = answer_token_request(ctx);
  if (!response || response->status >= 400) telemetry::count(telemetry::Counter::kTokensRefused);
  return response;
}

static Result<http::Response> answer_token_request(server::Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(http::Form form, ctx.request.form());
  if (auto repeated = form.first_repeated()) {
    return invalid_request("parameter " + *repeated + " is repeated");
  }
  auto grant_type = form.get("grant_type");
  if (!grant_type || grant_type->empty()) return invalid_request("grant_type is required");
  auto credentials = oauth::extract_client_credentials(ctx.request, form);
  if (!credentials) {
    if (credentials.status().reason() == "invalid_client") {
      return client_error(credentials.status(), oauth::ClientCredentials{});
    }
    return credentials.status();
  }
  int64_t now = unix_now();
  // Only the signer is needed here, and a ring that cannot be refreshed keeps signing with the
  // keys it holds; without a signer (a new worker while the database is away) minting answers
  // unavailable: 503 temporarily_unavailable with Retry-After, never a token-shaped failure.
  (void)ctx.services.keys.refresh_if_stale(now);
  PORTCULLIS_ASSIGN_OR_RETURN(const std::string dpop_jkt, dpop_key(ctx, now));
  TokenRateLimit rate_limit(ctx, now);

  if (*grant_type == "client_credentials") {
    // Management client ids are not published anywhere, so counting before authentication
    // lends no one a way to exhaust another client's budget.
    PORTCULLIS_RETURN_IF_ERROR(rate_limit.count_once(credentials->client_id));
    auto caller = oauth::authenticate_client_credentials_caller(ctx.services, *credentials, now);
    if (!caller) {
      if (caller.status().reason() == "invalid_client") {
        return client_error(caller.status(), *credentials);
      }
      return caller.status();
    }
    PORTCULLIS_ASSIGN_OR_RETURN(
        const oauth::IssuedToken issued,
        oauth::grant_client_credentials(ctx.services.keys, ctx.services.config, *caller,
                                        form.get("scope"), now, dpop_jkt));
    telemetry::count(telemetry::Counter::kTokensIssuedClientCredentials);
    events::Event e = ctx.event(events::type::kTokenIssued);
    e.client_id = issued.client_id;
    e.data["grant_type"] = "client_credentials";
    e.data["scope"] = issued.scope;
    e.data["jti"] = issued.token.jti;
    e.data["token_type"] = token_type(dpop_jkt);
    // Nothing is stored for this token but its event: written (one CALL) before the answer
    // leaves (docs/events.md, "Recording").
    PORTCULLIS_RETURN_IF_ERROR(ctx.write_event(std::move(e)));
    Json::Value body(Json::objectValue);
    body["access_token"] = issued.token.jwt;
    body["token_type"] = token_type(dpop_jkt);
    body["expires_in"] = static_cast<Json::Int64>(issued.token.expires_at - now);
    body["scope"] = issued.scope;
    return no_store_json(body);
  }
  if (*grant_type != "authorization_code" && *grant_type != "refresh_token") {
    return Status::invalid_argument("grant_type " + *grant_type + " is not supported")
        .with_reason("unsupported_grant_type");
  }
  if (*grant_type == "authorization_code") {
    // The code opened once (HKDF and AES-GCM, no round trip), for both ways below.
    const std::optional<oauth::SealedCode> code =
        oauth::open_code(ctx.services.master_key, form.get_or("code", ""));
    // A registered client as this worker knows it, and the code alone: one statement
    // (token_grants.h). Whatever that does not decide, the read below does. The request counts
    // once the client is known to be itself (a dcr_ id is no secret, and counting failed
    // attempts against it would let anyone lock a confidential client out).
    if (auto known =
            oauth::authenticate_client_from_worker_cache(ctx.services, *credentials, now)) {
      PORTCULLIS_RETURN_IF_ERROR(rate_limit.count_once(known->client_id));
      if (auto decided =
              oauth::redeem_authorization_code_alone(ctx, *known, code, form, now, dpop_jkt)) {
        return user_token_response(*decided, now, dpop_jkt);
      }
    }
    // The client and the code's state in one read; the code is looked at once the client is
    // authenticated (client_auth.h).
    auto exchange = oauth::authenticate_client_with_code(ctx.services, *credentials, code, now);
    if (!exchange) {
      if (is_client_error(exchange.status())) return client_error(exchange.status(), *credentials);
      return exchange.status();
    }
    PORTCULLIS_RETURN_IF_ERROR(rate_limit.count_once(exchange->client.client_id));
    return user_token_response(
        oauth::redeem_authorization_code(ctx, *exchange, form, now, dpop_jkt), now, dpop_jkt);
  }
  auto client = oauth::authenticate_client(ctx.services, *credentials, now,
                                           oauth::ClientLookup::kWorkerCache);
  if (!client) {
    if (is_client_error(client.status())) return client_error(client.status(), *credentials);
    return client.status();
  }
  PORTCULLIS_RETURN_IF_ERROR(rate_limit.count_once(client->client_id));
  return user_token_response(oauth::redeem_refresh_token(ctx, *client, form, now, dpop_jkt), now,
                             dpop_jkt);
}

}  // namespace portcullis::oauth_worker
