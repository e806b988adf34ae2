// The Prometheus text exposition (format 0.0.4) of every pool's telemetry block on this node:
// each <dir>/*.metrics file written by a pool master (lib/core/telemetry.h), mapped read-only,
// its pool name becoming the `pool` label. A file that is not a complete block of the current
// layout is skipped (and counted in portcullis_metrics_files_skipped).
#pragma once

#include <string>

namespace portcullis::metrics {

std::string render_directory(const std::string& dir);

}  // namespace portcullis::metrics
