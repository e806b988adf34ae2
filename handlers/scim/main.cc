// portcullis-scim: SCIM 2.0 under /scim/v2 (contract §9). Every route authenticates a SCIM
// directory's bearer token; until directories are provisioned there is nothing to serve, and
// every path answers in the SCIM error shape.
#include "server/worker_main.h"

namespace portcullis {
namespace {

void install_routes(server::App&) {}

}  // namespace
}  // namespace portcullis

int main(int argc, char** argv) {
  return portcullis::server::worker_main(
      argc, argv, {"scim", portcullis::http::Family::kScim, portcullis::install_routes});
}
