// `portcullis doctor`: is this node fit to serve? One line per check (configuration, master
// key, database, schema, signing keys, metrics directory), "ok", "warn" or "FAIL" first, and an
// exit code of 0 only when nothing failed. It never changes anything, so it is safe to run on
// a live node, after an install or an upgrade, or from a monitoring check.
#pragma once

#include <string>

namespace portcullis::cli {

int doctor(const std::string& config_path);

}  // namespace portcullis::cli
