#include "token_endpoint.h"

#include "core/time.h"
#include "oauth/client_auth.h"
#include "oauth/client_credentials.h"

namespace portcullis::oauth_worker {
namespace {

Status invalid_request(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_request");
}

// A token response: RFC 6749 §5.1, never cached.
http::Response token_response(const oauth::IssuedToken& issued, int64_t now) {
  Json::Value body(Json::objectValue);
  body["access_token"] = issued.token.jwt;
  body["token_type"] = "Bearer";
  body["expires_in"] = static_cast<Json::Int64>(issued.token.expires_at - now);
  body["scope"] = issued.scope;
  http::Response r = http::Response::json(200, body);
  r.set_header("Cache-Control", "no-store");
  r.set_header("Pragma", "no-cache");
  return r;
}

}  // namespace

Result<http::Response> token_endpoint(server::Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(http::Form form, ctx.request.form());
  if (auto repeated = form.first_repeated()) {
    return invalid_request("parameter " + *repeated + " is repeated");
  }
  auto grant_type = form.get("grant_type");
  if (!grant_type || grant_type->empty()) return invalid_request("grant_type is required");
  auto credentials = oauth::extract_client_credentials(ctx.request, form);
  if (!credentials) return credentials.status();

  int64_t now = unix_now();
  (void)ctx.services.keys.refresh_if_stale(now);
  if (*grant_type == "client_credentials") {
    auto issued =
        oauth::grant_client_credentials(ctx.services.db, ctx.services.keys, ctx.services.config,
                                        *credentials, form.get("scope"), now);
    if (!issued) {
      if (issued.status().reason() == "invalid_client") {
        // RFC 6749 §5.2: 401, with a Basic challenge when the client tried Basic.
        http::Response r = http::oauth_error(401, "invalid_client", issued.status().message());
        if (credentials->method == oauth::ClientCredentials::Method::kBasic) {
          r.set_header("WWW-Authenticate", "Basic realm=\"portcullis\"");
        }
        return r;
      }
      return issued.status();
    }
    events::Event e = ctx.event("token.issued");
    e.client_id = issued->client_id;
    e.data["grant_type"] = "client_credentials";
    e.data["scope"] = issued->scope;
    e.data["jti"] = issued->token.jti;
    ctx.events.add(std::move(e));
    return token_response(*issued, now);
  }
  return Status::invalid_argument("grant_type " + *grant_type + " is not supported")
      .with_reason("unsupported_grant_type");
}

}  // namespace portcullis::oauth_worker
