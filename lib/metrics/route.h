// GET /metrics for the wellknown pool. It answers only requests that nginx's loopback-only
// metrics server passes with the FastCGI parameter PORTCULLIS_METRICS_LISTENER=1
// (nginx/portcullis/metrics.conf); through the public server, where no location sets it, the
// path is an ordinary 404.
#pragma once

#include "server/app.h"

namespace portcullis::metrics {

void install_route(server::App& app);

}  // namespace portcullis::metrics
