#include "revocation_endpoints.h"

#include <strings.h>

#include "core/time.h"
#include "oauth/client_auth.h"
#include "oauth/token_introspection.h"
#include "server/bearer_auth.h"

namespace portcullis::oauth_worker {
namespace {

constexpr const char* kIntrospectScope = "tokens:introspect";

http::Response no_store(http::Response r) {
  r.set_header("Cache-Control", "no-store");
  return r;
}

http::Response invalid_client(const oauth::ClientCredentials& credentials, const std::string& why) {
  return oauth::invalid_client_response(credentials, why);
}

// The caller of /oauth/introspect: a management token (Bearer) or an API client's credentials,
// either holding tokens:introspect. An http::Response is the refusal to send.
std::optional<http::Response> introspection_caller_refused(server::Context& ctx,
                                                           const http::Form& form) {
  auto authorization = ctx.request.header("authorization");
  if (authorization && authorization->size() > 7 &&
      strncasecmp(authorization->c_str(), "Bearer ", 7) == 0) {
    server::Auth auth{server::AuthKind::kManagementToken, kIntrospectScope};
    auto caller = server::authenticate_management_token(ctx.request, auth, ctx.services);
    if (caller) return std::nullopt;
    if (caller.status().code() == Code::kPermissionDenied) {
      return http::oauth_error(403, "insufficient_scope", "the token lacks tokens:introspect");
    }
    if (caller.status().code() == Code::kUnavailable)
      return http::error_response(http::Family::kOAuth, caller.status());
    http::Response r = http::oauth_error(401, "invalid_token", caller.status().message());
    r.set_header("WWW-Authenticate", "Bearer error=\"invalid_token\"");
    return r;
  }
  auto credentials = oauth::extract_client_credentials(ctx.request, form);
  if (!credentials) {
    if (credentials.status().reason() == "invalid_client") {
      return invalid_client({}, "authenticate with a management token or API client credentials");
    }
    return http::error_response(http::Family::kOAuth, credentials.status());
  }
  if (credentials->method == oauth::ClientCredentials::Method::kNone) {
    return invalid_client(*credentials, "introspection needs client credentials");
  }
  auto client = oauth::authenticate_api_client(ctx.services.db, *credentials);
  if (!client) {
    if (client.status().code() == Code::kUnavailable)
      return http::error_response(http::Family::kOAuth, client.status());
    return invalid_client(*credentials, "client authentication failed");
  }
  if (!client->scopes.count(kIntrospectScope)) {
    return http::oauth_error(403, "insufficient_scope", "the client lacks tokens:introspect");
  }
  return std::nullopt;
}

}  // namespace

Result<http::Response> revocation_endpoint(server::Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(http::Form form, ctx.request.form());
  if (auto repeated = form.first_repeated()) {
    return Status::invalid_argument("parameter " + *repeated + " is repeated");
  }
  auto credentials = oauth::extract_client_credentials(ctx.request, form);
  if (!credentials) {
    if (credentials.status().reason() == "invalid_client")
      return invalid_client({}, credentials.status().message());
    return credentials.status();
  }
  int64_t now = unix_now();
  auto client = oauth::authenticate_client(ctx.services, *credentials, now);
  if (!client) {
    if (client.status().code() == Code::kUnavailable) return client.status();
    return invalid_client(*credentials, client.status().message());
  }
  auto token = form.get("token");
  if (!token || token->empty()) return Status::invalid_argument("token is required");
  PORTCULLIS_RETURN_IF_ERROR(
      oauth::revoke(ctx, *client, *token, form.get_or("token_type_hint", ""), now));
  return no_store(http::Response::empty(200));
}

Result<http::Response> introspection_endpoint(server::Context& ctx) {
  PORTCULLIS_ASSIGN_OR_RETURN(http::Form form, ctx.request.form());
  if (auto refused = introspection_caller_refused(ctx, form)) return no_store(*refused);
  auto token = form.get("token");
  if (!token) return Status::invalid_argument("token is required");
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value answer,
                              oauth::introspect(ctx.services, *token, unix_now()));
  return no_store(http::Response::json(200, answer));
}

}  // namespace portcullis::oauth_worker
