// portcullis-oauth-pages-double: the oauth worker's sign-in and consent pages wired to
// DbLoginFlowDouble, for the browser test (tests/integration/signin-pages.test.mjs) to drive
// through nginx until the real LoginFlow is wired into portcullis-oauth. Test-only; never
// installed.
#include "db_login_flow.h"
#include "server/worker_main.h"
#include "signin_routes.h"

int main(int argc, char** argv) {
  using namespace portcullis;
  return server::worker_main(argc, argv,
                             {"oauth", http::Family::kOAuth, [](server::App& app) {
                                oauth_worker::install_signin_routes(
                                    app, [](server::Services& services) -> oauth::LoginFlow& {
                                      // One per worker process, built after the fork like the real
                                      // one.
                                      static testing::DbLoginFlowDouble flow(services.db);
                                      return flow;
                                    });
                              }});
}
