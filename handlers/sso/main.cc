// portcullis-sso: enterprise SSO endpoints (/sso/*).
#include "server/worker_main.h"
#include "sso_routes.h"

int main(int argc, char** argv) {
  return portcullis::server::worker_main(
      argc, argv,
      {"sso", portcullis::http::Family::kOAuth, portcullis::sso_worker::install_sso_routes});
}
