#include "server/worker_main.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "config/config.h"
#include "core/telemetry.h"
#include "core/time.h"
#include "crypto/aead.h"
#include "keys/key_ring.h"
#include "log/log.h"
#include "runtime/fastcgi_loop.h"
#include "runtime/listen_socket.h"
#include "runtime/master.h"
#include "runtime/watchdog.h"
#include "store/db.h"

namespace portcullis::server {
namespace {

struct Flags {
  std::string config_path;
  std::optional<std::string> socket_path;
  std::optional<int> workers;
};

void usage(const std::string& name) {
  std::fprintf(stderr,
               "usage: portcullis-%s [--config FILE] [--socket PATH] [--workers N]\n"
               "  Serves the %s path family over FastCGI. Without --socket the listening socket\n"
               "  comes from systemd (LISTEN_FDS) or fd 0 (spawn-fcgi).\n",
               name.c_str(), name.c_str());
}

std::optional<Flags> parse_flags(int argc, char** argv, const std::string& name) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    if (arg == "--config") {
      auto v = value();
      if (!v) return std::nullopt;
      f.config_path = *v;
    } else if (arg == "--socket") {
      f.socket_path = value();
      if (!f.socket_path) return std::nullopt;
    } else if (arg == "--workers") {
      auto v = value();
      if (!v) return std::nullopt;
      try {
        f.workers = std::stoi(*v);
      } catch (...) {
        return std::nullopt;
      }
    } else {
      usage(name);
      return std::nullopt;
    }
  }
  return f;
}

// Everything a worker process owns, built after the fork.
int run_worker(int listen_fd, const config::Config& config, const crypto::MasterKey& master_key,
               const WorkerBinary& binary) {
  store::Db db(config.db);
  keys::KeyRing keys(db, master_key, config);
  Services services{config, db, keys, master_key};
  App app(binary.family, services);
  binary.install_routes(app);
  // Warm up: connect and load keys now rather than on the first request; failures are fine
  // here (the database may be starting), requests will retry.
  (void)keys.reload(unix_now());
  app.start_idle_tasks();

  runtime::ServeOptions options;
  options.on_idle = [&]() { app.on_idle(); };
  options.idle_wake = app.idle_wake();
  options.keepalive_idle = std::chrono::milliseconds(config.fastcgi_keepalive_idle_ms);
  options.max_connections = static_cast<std::size_t>(config.fastcgi_max_connections);
  int code = runtime::serve_fastcgi(
      listen_fd,
      [&](FCGX_Request& fcgi) {
        http::Request request;
        http::BodyRead body = http::read_request(fcgi, request);
        http::Response response =
            body == http::BodyRead::kOk ? app.handle(request) : app.reject_body(request, body);
        http::write_response(fcgi, response);
        // Hand the response to nginx before the event phase touches the database.
        runtime::finish_request(fcgi);
        // The request is over for the watchdog: batched events and periodic tasks are not its.
        runtime::request_finished();
        app.after_response();
      },
      options);
  app.on_idle();  // a graceful stop loses no event
  return code;
}

}  // namespace

int worker_main(int argc, char** argv, const WorkerBinary& binary) {
  auto flags = parse_flags(argc, argv, binary.name);
  if (!flags) {
    usage(binary.name);
    return 2;
  }
  auto loaded = config::load(flags->config_path);
  if (!loaded) {
    std::fprintf(stderr, "portcullis-%s: %s\n", binary.name.c_str(),
                 loaded.status().message().c_str());
    return 2;
  }
  auto config = std::make_unique<config::Config>(std::move(loaded).value());
  if (flags->workers) (*config).*binary.workers = *flags->workers;
  log::init(binary.name, log::parse_level(config->log_level, log::Level::kInfo));
  auto key = crypto::MasterKey::load_file(config->master_key_file);
  if (!key) {
    log::error("cannot load the master key", {{"error", key.status().message()}});
    return 2;
  }
  auto master_key = std::make_unique<crypto::MasterKey>(std::move(key).value());
  store::init_driver();

  auto socket = runtime::open_listen_socket(flags->socket_path);
  if (!socket) {
    log::error("cannot open the listening socket", {{"error", socket.status().message()}});
    return 2;
  }

  // The pool's metrics block, shared with every worker forked from here (lib/core/telemetry.h).
  if (Status st = telemetry::open_shared(config->metrics_dir, binary.name); !st.is_ok()) {
    log::warn("metrics are off", {{"error", st.message()}});
  }

  runtime::MasterOptions options;
  options.name = binary.name;
  const int workers = (*config).*binary.workers;
  options.workers = workers > 0 ? workers : runtime::default_worker_count();
  options.busy_limit = std::chrono::milliseconds(config->worker_busy_limit_ms);
  runtime::WorkerHooks hooks;
  hooks.reload = [&]() -> Status {
    // New workers fork from the master, so replacing its copy is all a reload needs.
    auto fresh = config::load(flags->config_path);
    if (!fresh) return fresh.status();
    auto fresh_key = crypto::MasterKey::load_file(fresh->master_key_file);
    if (!fresh_key) return fresh_key.status();
    if (flags->workers) (*fresh).*binary.workers = *flags->workers;
    *config = std::move(fresh).value();
    *master_key = std::move(fresh_key).value();
    log::init(binary.name, log::parse_level(config->log_level, log::Level::kInfo));
    return Status::ok();
  };
  hooks.run_worker = [&](int listen_fd) {
    return run_worker(listen_fd, *config, *master_key, binary);
  };
  log::info("starting", {{"workers", options.workers}});
  return runtime::run_master(*socket, options, hooks);
}

}  // namespace portcullis::server
