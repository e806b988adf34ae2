#include "oauth/client_credentials.h"

#include "format/scope_list.h"
#include "management/scopes.h"

namespace portcullis::oauth {

Result<IssuedToken> grant_client_credentials(const keys::KeyRing& keys,
                                             const config::Config& config,
                                             const management::ApiClient& client,
                                             const std::optional<std::string>& requested_scope,
                                             int64_t now, const std::string& dpop_jkt) {
  std::set<std::string> scopes = client.scopes;
  if (requested_scope) {
    std::set<std::string> requested = format::scope_set(*requested_scope);
    for (const auto& s : requested) {
      if (!client.scopes.count(s)) {
        return Status::invalid_argument("scope " + s + " is not granted to this client")
            .with_reason("invalid_scope");
      }
    }
    if (!requested.empty()) scopes = std::move(requested);
  }
  IssuedToken out;
  out.scope = format::join_scopes(scopes);
  out.client_id = client.id;
  AccessTokenRequest request;
  request.issuer = config.base_url;
  request.subject = client.id;
  request.audience = management::management_audience(config);
  request.client_id = client.id;
  request.scope = out.scope;
  request.lifetime_seconds = config.management_token_lifetime_seconds;
  request.dpop_jkt = dpop_jkt;
  PORTCULLIS_ASSIGN_OR_RETURN(out.token, mint_access_token(keys, request, now));
  return out;
}

}  // namespace portcullis::oauth
