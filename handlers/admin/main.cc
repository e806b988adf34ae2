// portcullis-admin: the admin portal (/admin/*, docs/admin.md), server-rendered pages over the
// same libraries the management API uses.
#include "admin/session_store.h"
#include "core/time.h"
#include "home.h"
#include "pages.h"
#include "portal.h"
#include "server/worker_main.h"
#include "signin.h"

namespace portcullis {
namespace {

void install_routes(server::App& app) {
  admin_worker::install_static_routes(app);
  admin_worker::install_signin_routes(app);
  admin_worker::install_home_routes(app);
  admin_worker::install_resource_pages(app);
  admin_worker::install_organization_pages(app);
  admin_worker::install_connection_pages(app);
  admin_worker::install_user_pages(app);
  admin_worker::install_client_pages(app);
  admin_worker::install_webhook_pages(app);
  admin_worker::install_event_pages(app);
  app.add_periodic("prune-admin-sessions", 3600, [](server::Services& s) -> Status {
    return admin::SessionStore::prune(s.db, unix_now());
  });
}

}  // namespace
}  // namespace portcullis

int main(int argc, char** argv) {
  return portcullis::server::worker_main(
      argc, argv, {"admin", portcullis::http::Family::kOAuth, portcullis::install_routes});
}
