// main() of every worker binary: flags, config, logging, the listening socket, the master and
// its pre-forked workers; in each worker the per-process services (database connection, key
// ring) and the App with the binary's routes, served over FastCGI until SIGTERM.
#pragma once

#include <functional>
#include <string>

#include "config/config.h"
#include "http/errors.h"
#include "server/app.h"

namespace portcullis::server {

struct WorkerBinary {
  std::string name;     // "wellknown", "oauth", ... (log component, usage text)
  http::Family family;  // the family of errors for paths it serves
  std::function<void(App&)> install_routes;
  // The setting that counts its workers (PORTCULLIS_WORKERS unless the pool has its own); the
  // --workers flag overrides it.
  int config::Config::*workers = &config::Config::workers;
};

// Flags: --config FILE, --socket PATH (else the socket is inherited from systemd or on fd 0),
// --workers N. Returns the process exit code.
int worker_main(int argc, char** argv, const WorkerBinary& binary);

}  // namespace portcullis::server
