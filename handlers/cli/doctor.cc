#include "doctor.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <set>

#include "config/config.h"
#include "core/time.h"
#include "crypto/aead.h"
#include "keys/key_ring.h"
#include "store/db.h"
#include "store/migrations.h"
#include "tokens/access_token.h"

namespace portcullis::cli {
namespace {

struct Report {
  int failures = 0;
  void line(const char* verdict, const char* check, const std::string& detail) {
    std::printf("%-5s %-11s %s\n", verdict, check, detail.c_str());
    if (std::string_view(verdict) == "FAIL") ++failures;
  }
};

std::string mode_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "?";
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return buf;
}

void check_database(Report& r, const config::Config& config, const crypto::MasterKey* key) {
  store::Db db(config.db);
  std::string where = config.db.socket.empty()
                          ? config.db.host + " (port " + std::to_string(config.db.port) + ")"
                          : config.db.socket;
  auto version = db.query("SELECT VERSION()");
  if (!version || version->empty()) {
    r.line(
        "FAIL", "database",
        "cannot connect to " + where + " as " + config.db.user + ": " + version.status().message());
    r.line("FAIL", "schema", "not checked (no database)");
    r.line("FAIL", "keys", "not checked (no database)");
    return;
  }
  std::string detail = "connected to " + where + ", server " + (*version)[0].str(0);
  // Galera: the node must be synced and in the primary component to take writes.
  auto wsrep = db.query(
      "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE "
      "VARIABLE_NAME IN ('WSREP_READY', 'WSREP_CLUSTER_STATUS', 'WSREP_CLUSTER_SIZE', "
      "'WSREP_LOCAL_STATE_COMMENT')");
  bool cluster_ok = true;
  if (wsrep && !wsrep->empty()) {
    std::string ready, status, size, state;
    for (const auto& row : *wsrep) {
      if (row.str(0) == "WSREP_READY") ready = row.str(1);
      if (row.str(0) == "WSREP_CLUSTER_STATUS") status = row.str(1);
      if (row.str(0) == "WSREP_CLUSTER_SIZE") size = row.str(1);
      if (row.str(0) == "WSREP_LOCAL_STATE_COMMENT") state = row.str(1);
    }
    if (!status.empty() && status != "Disconnected") {
      detail += "; Galera: " + status + ", " + size + " node(s), " + state;
      cluster_ok = ready == "ON" && status == "Primary";
    }
  }
  r.line(cluster_ok ? "ok" : "FAIL", "database", detail);

  std::set<int64_t> applied;
  auto rows = db.query("SELECT version FROM schema_migrations");
  if (rows) {
    for (const auto& row : *rows) applied.insert(row.i64(0));
  }
  const auto& embedded = store::embedded_migrations();
  std::string missing;
  for (const auto& m : embedded) {
    if (!applied.count(m.version))
      missing += (missing.empty() ? "" : ", ") + std::to_string(m.version);
  }
  if (!rows) {
    r.line("FAIL", "schema", "no schema_migrations table: run `portcullis migrate`");
  } else if (!missing.empty()) {
    r.line("FAIL", "schema", "migrations not applied: " + missing + " (run `portcullis migrate`)");
  } else {
    int64_t newest = applied.empty() ? 0 : *applied.rbegin();
    r.line(
        newest > embedded.back().version ? "warn" : "ok", "schema",
        std::to_string(embedded.size()) + " migrations applied" +
            (newest > embedded.back().version ? "; the database has newer ones than this binary (" +
                                                    std::to_string(newest) + "): upgrade this node"
                                              : ""));
  }

  if (!key) {
    r.line("FAIL", "keys", "not checked (no master key)");
    return;
  }
  keys::KeyRing ring(db, *key, config);
  int64_t now = unix_now();
  Status loaded = ring.reload(now);
  if (!loaded.is_ok()) {
    r.line("FAIL", "keys",
           "cannot load the signing keys with this master key: " + loaded.message());
    return;
  }
  // Every algorithm a token may need: RS256 (management tokens) and each resource's.
  auto required = oauth::required_signers(db, ring, now);
  if (!required) {
    r.line("FAIL", "keys", "cannot read the resources' algorithms: " + required.status().message());
    return;
  }
  for (const oauth::RequiredSigner& s : *required) {
    const std::string alg(jose::alg_name(s.alg));
    const std::string users = (s.alg == jose::JwsAlg::kRS256 ? "management tokens and " : "") +
                              std::to_string(s.resources) + " resource(s)";
    if (s.key) {
      r.line("ok", "keys",
             alg + " signing key " + s.key->id + " active, readable with the master key (" + users +
                 ")");
      continue;
    }
    // The ring skips a key it cannot unseal: tell a missing key from an unreadable one.
    auto stored = db.query("SELECT COUNT(*) FROM signing_keys WHERE algorithm = ?", {alg});
    int64_t count = stored && !stored->empty() ? (*stored)[0].i64(0) : 0;
    r.line("FAIL", "keys",
           alg + ": " +
               (count > 0 ? std::to_string(count) +
                                " signing key(s) stored, none active and readable with this master "
                                "key (a different master key than the one that sealed them?)"
                          : "no signing key (`portcullis bootstrap` creates one for each "
                            "algorithm without one)") +
               "; " + users + " need one");
  }
}

}  // namespace

int doctor(const std::string& config_path) {
  Report r;
  auto config = config::load(config_path);
  if (!config) {
    r.line("FAIL", "config", config.status().message());
    std::printf("doctor: %d check(s) failed\n", r.failures);
    return 1;
  }
  r.line("ok", "config",
         (config_path.empty() ? std::string("(environment)") : config_path) + ": mode " +
             config->mode + ", base URL " + config->base_url + ", " +
             (config->workers > 0 ? std::to_string(config->workers) : std::string("auto")) +
             " workers per pool");

  std::optional<crypto::MasterKey> key;
  auto loaded = crypto::MasterKey::load_file(config->master_key_file);
  if (loaded) {
    key.emplace(std::move(loaded).value());
    r.line("ok", "master key",
           config->master_key_file + " (mode " + mode_of(config->master_key_file) + ")");
  } else {
    r.line("FAIL", "master key", loaded.status().message());
  }

  store::init_driver();
  check_database(r, *config, key ? &*key : nullptr);

  if (config->metrics_dir.empty()) {
    r.line("warn", "metrics", "PORTCULLIS_METRICS_DIR is empty: /metrics is off");
  } else if (::access(config->metrics_dir.c_str(), W_OK) == 0) {
    r.line("ok", "metrics", config->metrics_dir + " is writable");
  } else {
    r.line("warn", "metrics",
           config->metrics_dir + " is not writable by this user yet (the pools create it)");
  }
  if (r.failures) {
    std::printf("doctor: %d check(s) failed\n", r.failures);
    return 1;
  }
  std::printf("doctor: healthy\n");
  return 0;
}

}  // namespace portcullis::cli
