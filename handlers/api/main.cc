// portcullis-api: the management and listing API under /api/v1 (contract §7, §8).
#include "api_clients.h"
#include "api_connections.h"
#include "api_directories.h"
#include "api_domains.h"
#include "api_environment.h"
#include "api_events.h"
#include "api_memberships.h"
#include "api_organizations.h"
#include "api_resource_clients.h"
#include "api_resources.h"
#include "api_social.h"
#include "api_users.h"
#include "api_webhooks.h"
#include "server/bearer_auth.h"
#include "server/worker_main.h"

namespace portcullis {
namespace {

void install_routes(server::App& app) {
  app.set_authenticator(server::AuthKind::kManagementToken, server::authenticate_management_token);
  api_worker::install_api_client_routes(app);
  api_worker::install_resource_routes(app);
  api_worker::install_resource_client_routes(app);
  api_worker::install_organization_routes(app);
  api_worker::install_membership_routes(app);
  api_worker::install_user_routes(app);
  api_worker::install_domain_routes(app);
  api_worker::install_connection_routes(app);
  api_worker::install_directory_routes(app);
  api_worker::install_event_routes(app);
  api_worker::install_webhook_routes(app);
  api_worker::install_social_routes(app);
  api_worker::install_environment_routes(app);
}

}  // namespace
}  // namespace portcullis

int main(int argc, char** argv) {
  return portcullis::server::worker_main(
      argc, argv, {"api", portcullis::http::Family::kApi, portcullis::install_routes});
}
