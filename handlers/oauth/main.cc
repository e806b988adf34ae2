// portcullis-oauth: the OAuth endpoints (/oauth/*), client registration and the sign-in pages.
#include <memory>

#include "authorization.h"
#include "cimd/cache.h"
#include "client_register.h"
#include "core/time.h"
#include "dpop/replay_cache.h"
#include "oauth/login_requests.h"
#include "ratelimit/limiter.h"
#include "revocation_endpoints.h"
#include "server/worker_main.h"
#include "signin_routes.h"
#include "token_endpoint.h"
#include "tokens/codes.h"
#include "tokens/grants.h"

namespace portcullis {
namespace {

void install_routes(server::App& app) {
  // RFC 9700 §4.11: no CORS on the authorization endpoint, which a browser navigates to.
  app.add("GET", "/oauth/authorize", server::Route{.handler = oauth::authorize});
  app.add("POST", "/oauth/authorize", server::Route{.handler = oauth::authorize});
  app.add("POST", "/oauth/token",
          server::Route{.handler = oauth_worker::token_endpoint, .cors = true});
  app.add("POST", "/oauth/revoke",
          server::Route{.handler = oauth_worker::revocation_endpoint, .cors = true});
  app.add("POST", "/oauth/introspect",
          server::Route{.handler = oauth_worker::introspection_endpoint, .cors = true});
  oauth_worker::install_registration(app);

  // One LoginFlow per worker process, built on first use (after the fork, like Services).
  auto flow = std::make_shared<std::unique_ptr<oauth::LoginFlow>>();
  oauth_worker::install_signin_routes(app, [flow](server::Services& services) -> oauth::LoginFlow& {
    if (!*flow) *flow = oauth::make_login_flow(services);
    return **flow;
  });

  // Expired codes, login requests, tokens, DPoP proof jtis and rate-limit windows (sessions and
  // e-mail codes are pruned by the sign-in routes).
  app.add_periodic("prune-oauth-state", 600, [](server::Services& s) -> Status {
    int64_t now = unix_now();
    PORTCULLIS_RETURN_IF_ERROR(oauth::CodeStore(s.db).prune(now));
    PORTCULLIS_RETURN_IF_ERROR(oauth::LoginRequestStore(s.db).prune(now));
    PORTCULLIS_RETURN_IF_ERROR(oauth::GrantStore(s.db).prune(now));
    PORTCULLIS_RETURN_IF_ERROR(cimd::prune_documents(s.db, now));
    PORTCULLIS_RETURN_IF_ERROR(dpop::ReplayCache(s.db).prune(now));
    return ratelimit::Limiter(s.db).prune(now);
  });
}

}  // namespace
}  // namespace portcullis

int main(int argc, char** argv) {
  return portcullis::server::worker_main(
      argc, argv, {"oauth", portcullis::http::Family::kOAuth, portcullis::install_routes});
}
