#include "management/bearer_auth.h"

#include <strings.h>

#include "core/time.h"
#include "format/scope_list.h"
#include "jose/claims.h"
#include "jose/jwt.h"
#include "management/api_clients.h"
#include "management/scopes.h"
#include "oauth/client_credentials.h"

namespace portcullis::management {

Result<server::Caller> authenticate_management_token(const http::Request& request,
                                                     const server::Auth& auth,
                                                     server::Services& services) {
  auto header = request.header("authorization");
  if (!header || header->size() <= 7 || strncasecmp(header->c_str(), "Bearer ", 7) != 0) {
    return Status::unauthenticated("a Bearer management token is required");
  }
  std::string_view token = std::string_view(*header).substr(7);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  int64_t now = unix_now();
  (void)services.keys.refresh_if_stale(now);
  auto decoded =
      jose::verify_jwt(token, [&](std::string_view kid) { return services.keys.public_key(kid); });
  if (!decoded) return Status::unauthenticated("the access token is not valid");
  jose::ClaimChecks checks;
  checks.issuer = services.config.base_url;
  checks.audience = oauth::management_audience(services.config);
  checks.typ = "at+jwt";
  checks.now = now;
  if (Status st = jose::check_claims(*decoded, checks); !st.is_ok()) {
    return Status::unauthenticated("the access token is not valid: " + st.message());
  }
  const Json::Value& sub = decoded->claims["sub"];
  if (!sub.isString()) return Status::unauthenticated("the access token has no subject");
  ApiClientStore clients(services.db);
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

}  // namespace portcullis::management
