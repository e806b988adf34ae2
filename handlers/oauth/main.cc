// portcullis-oauth: the OAuth endpoints (/oauth/*), client registration and the sign-in pages.
#include "client_register.h"
#include "server/worker_main.h"
#include "token_endpoint.h"

namespace portcullis {
namespace {

void install_routes(server::App& app) {
  app.add("POST", "/oauth/token",
          server::Route{.handler = oauth_worker::token_endpoint, .cors = true});
  oauth_worker::install_registration(app);
}

}  // namespace
}  // namespace portcullis

int main(int argc, char** argv) {
  return portcullis::server::worker_main(
      argc, argv, {"oauth", portcullis::http::Family::kOAuth, portcullis::install_routes});
}
