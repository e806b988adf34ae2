#include "metrics/route.h"

#include "metrics/render.h"

namespace portcullis::metrics {

void install_route(server::App& app) {
  server::Route route;
  route.access_log = false;  // scraped every few seconds; counted like any request
  route.handler = [](server::Context& ctx) -> Result<http::Response> {
    auto it = ctx.request.gateway_params.find("PORTCULLIS_METRICS_LISTENER");
    if (it == ctx.request.gateway_params.end() || it->second != "1") {
      return Status::not_found("no such endpoint");
    }
    const std::string& dir = ctx.services.config.metrics_dir;
    if (dir.empty()) return Status::unavailable("metrics are off (PORTCULLIS_METRICS_DIR)");
    return http::Response::text(200, render_directory(dir), "text/plain; version=0.0.4");
  };
  app.add("GET", "/metrics", std::move(route));
}

}  // namespace portcullis::metrics
