// `portcullis`: the operator's command. Every command reads the same config as the workers.
//
//   portcullis [--config FILE] migrate
//   portcullis [--config FILE] doctor
//   portcullis [--config FILE] bootstrap
//   portcullis [--config FILE] keys rotate [RS256|ES256|EdDSA] | keys list
//   portcullis [--config FILE] clients create --name NAME --scopes a,b | clients list
//                                          | clients delete ID
//   portcullis [--config FILE] oauth-clients prune [--older-than SECONDS] [--resource RES_ID]
//   portcullis [--config FILE] events prune [--older-than SECONDS] [--batch N]
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "clients/clients.h"
#include "config/config.h"
#include "core/time.h"
#include "crypto/aead.h"
#include "doctor.h"
#include "events/event_store.h"
#include "format/scope_list.h"
#include "keys/key_store.h"
#include "log/log.h"
#include "management/api_clients.h"
#include "management/environment.h"
#include "management/scopes.h"
#include "store/db.h"
#include "store/migrate.h"

namespace portcullis {
namespace {

constexpr const char* kUsage =
    "usage: portcullis [--config FILE] COMMAND\n"
    "\n"
    "commands:\n"
    "  migrate                      apply pending schema migrations (idempotent)\n"
    "  doctor                       check configuration, master key, database, schema and\n"
    "                               signing keys; exit 0 only when all are healthy\n"
    "  bootstrap                    create the signing keys (RS256, ES256, EdDSA) that are\n"
    "                               missing; first run only: a management\n"
    "                               API client with every scope; prints its credentials once\n"
    "  keys rotate [ALG]            publish a new signing key for each algorithm (or only\n"
    "                               ALG: RS256, ES256, EdDSA); it signs after the\n"
    "                               pre-publication window (PORTCULLIS_KEY_PREPUBLISH_SECONDS)\n"
    "  keys list                    show the signing keys and their state\n"
    "  clients create --name NAME --scopes a,b\n"
    "                               create a management API client (prints its secret once)\n"
    "  clients list                 list management API clients\n"
    "  clients delete ID            delete a management API client\n"
    "  oauth-clients prune [--older-than SECONDS] [--resource RES_ID]\n"
    "                               delete DCR clients (of one resource, or all) unused for\n"
    "                               SECONDS (default PORTCULLIS_DCR_CLIENT_RETENTION_SECONDS)\n"
    "                               that no live grant names; prints how many\n"
    "  events prune [--older-than SECONDS] [--batch N]\n"
    "                               delete events older than SECONDS (default\n"
    "                               PORTCULLIS_EVENT_RETENTION_SECONDS, 90 days), N rows per\n"
    "                               statement (default 1000); prints how many\n";

int fail(const Status& st) {
  std::fprintf(stderr, "portcullis: %s\n", st.to_string().c_str());
  return 1;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= text.size()) {
    size_t comma = text.find(',', i);
    if (comma == std::string::npos) comma = text.size();
    std::string part = text.substr(i, comma - i);
    if (!part.empty()) out.push_back(part);
    i = comma + 1;
  }
  return out;
}

struct Env {
  config::Config config;
  store::Db db;
  crypto::MasterKey master_key;
};

int cmd_migrate(Env& env) {
  auto applied = store::migrate(env.db, store::embedded_migrations());
  if (!applied) return fail(applied.status());
  std::fprintf(stderr, "portcullis: schema is current (%d migration%s applied)\n", *applied,
               *applied == 1 ? "" : "s");
  return 0;
}

int cmd_bootstrap(Env& env) {
  keys::KeyStore key_store(env.db, env.master_key, env.config);
  if (Status st = key_store.ensure_initial_key(unix_now()); !st.is_ok()) return fail(st);

  auto created = management::EnvironmentStore(env.db).bootstrap();
  if (!created) return fail(created.status());
  if (!*created) {
    std::fprintf(stderr,
                 "portcullis: already bootstrapped; the bootstrap credentials were shown once. "
                 "Use `portcullis clients create` for new ones.\n");
    return 0;
  }
  std::printf("PORTCULLIS_CLIENT_ID=%s\nPORTCULLIS_CLIENT_SECRET=%s\n",
              (*created)->client.id.c_str(), (*created)->secret.c_str());
  return 0;
}

int cmd_keys(Env& env, const std::vector<std::string>& args) {
  keys::KeyStore key_store(env.db, env.master_key, env.config);
  int64_t now = unix_now();
  if ((args.size() == 1 || args.size() == 2) && args[0] == "rotate") {
    std::vector<jose::JwsAlg> algs(jose::kAccessTokenAlgs.begin(), jose::kAccessTokenAlgs.end());
    if (args.size() == 2) {
      auto alg = jose::alg_from_name(args[1]);
      if (!alg) {
        std::fputs("portcullis: keys rotate takes RS256, ES256 or EdDSA\n", stderr);
        return 2;
      }
      algs = {*alg};
    }
    auto ids = key_store.rotate(now, algs);
    if (!ids) return fail(ids.status());
    for (size_t i = 0; i < ids->size(); ++i) {
      std::printf("%s (%s) published now, signs from %s\n", (*ids)[i].c_str(),
                  std::string(jose::alg_name(algs[i])).c_str(),
                  unix_to_rfc3339(now + env.config.key_prepublish_seconds).c_str());
    }
    return 0;
  }
  if (args.size() == 1 && args[0] == "list") {
    auto keys = key_store.load_published(now);
    if (!keys) return fail(keys.status());
    // The signer of each algorithm is its latest key already active.
    std::map<jose::JwsAlg, std::string> signer;
    for (const auto& k : *keys) {
      if (k.activates_at <= now) signer[k.alg] = k.id;
    }
    std::printf("%-32s %-6s %-9s %-21s %-21s\n", "KID", "ALG", "STATE", "SIGNS FROM",
                "UNPUBLISHED AT");
    for (const auto& k : *keys) {
      const char* state = k.id == signer[k.alg]  ? "signing"
                          : k.activates_at > now ? "next"
                                                 : "retiring";
      std::printf("%-32s %-6s %-9s %-21s %-21s\n", k.id.c_str(),
                  std::string(jose::alg_name(k.alg)).c_str(), state,
                  unix_to_rfc3339(k.activates_at).c_str(),
                  k.expires_at ? unix_to_rfc3339(*k.expires_at).c_str() : "-");
    }
    return 0;
  }
  std::fputs(kUsage, stderr);
  return 2;
}

int cmd_clients(Env& env, const std::vector<std::string>& args) {
  management::ApiClientStore clients(env.db);
  if (!args.empty() && args[0] == "create") {
    std::string name;
    std::string scopes_text;
    for (size_t i = 1; i + 1 < args.size(); i += 2) {
      if (args[i] == "--name")
        name = args[i + 1];
      else if (args[i] == "--scopes")
        scopes_text = args[i + 1];
      else {
        std::fputs(kUsage, stderr);
        return 2;
      }
    }
    if (name.empty() || scopes_text.empty() || args.size() % 2 == 0) {
      std::fputs(kUsage, stderr);
      return 2;
    }
    auto scopes = management::parse_scope_list(split_commas(scopes_text));
    if (!scopes) return fail(scopes.status());
    auto made = clients.create(name, *scopes);
    if (!made) return fail(made.status());
    std::printf("PORTCULLIS_CLIENT_ID=%s\nPORTCULLIS_CLIENT_SECRET=%s\n", made->client.id.c_str(),
                made->secret.c_str());
    return 0;
  }
  if (args.size() == 1 && args[0] == "list") {
    auto all = clients.list();
    if (!all) return fail(all.status());
    for (const auto& c : *all) {
      std::printf("%s  %s  %s  %s\n", c.id.c_str(), c.create_time.c_str(), c.name.c_str(),
                  format::join_scopes(c.scopes).c_str());
    }
    return 0;
  }
  if (args.size() == 2 && args[0] == "delete") {
    if (Status st = clients.remove(args[1]); !st.is_ok()) return fail(st);
    return 0;
  }
  std::fputs(kUsage, stderr);
  return 2;
}

// OAuth clients of resources (`clients` is taken by management API clients). The oauth
// worker runs the same pruning hourly; this is for schedules of one's own and for tests.
int cmd_oauth_clients(Env& env, const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "prune" || args.size() % 2 == 0) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  int64_t retention = env.config.dcr_client_retention_seconds;
  std::string resource_id;
  for (size_t i = 1; i + 1 < args.size(); i += 2) {
    if (args[i] == "--older-than") {
      const std::string& v = args[i + 1];
      if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos) {
        return fail(Status::invalid_argument("--older-than takes a number of seconds"));
      }
      retention = std::stoll(v);
    } else if (args[i] == "--resource") {
      resource_id = args[i + 1];
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  oauth::ClientStore clients(env.db);
  auto pruned = clients.prune(unix_now(), retention, resource_id);
  if (!pruned) return fail(pruned.status());
  std::printf("%llu\n", static_cast<unsigned long long>(*pruned));
  return 0;
}

// Retention of the audit trail: small DELETE batches (each its own statement, a short lock on
// at most N rows), oldest first, until nothing older than the cutoff is left.
int cmd_events(Env& env, const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "prune" || args.size() % 2 == 0) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  int64_t retention = env.config.event_retention_seconds;
  int64_t batch = 1000;
  for (size_t i = 1; i + 1 < args.size(); i += 2) {
    const std::string& v = args[i + 1];
    bool number =
        !v.empty() && v.size() <= 12 && v.find_first_not_of("0123456789") == std::string::npos;
    if (args[i] == "--older-than" && number) {
      retention = std::stoll(v);
    } else if (args[i] == "--batch" && number && std::stoll(v) >= 1 && std::stoll(v) <= 100000) {
      batch = std::stoll(v);
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  std::string cutoff = unix_to_rfc3339(unix_now() - retention);  // "YYYY-MM-DDTHH:MM:SSZ"
  cutoff = cutoff.substr(0, 10) + " " + cutoff.substr(11, 8);
  auto pruned = events::EventStore(env.db).prune_before(cutoff, static_cast<int>(batch));
  if (!pruned) return fail(pruned.status());
  std::printf("%lld\n", static_cast<long long>(*pruned));
  return 0;
}

}  // namespace
}  // namespace portcullis

int main(int argc, char** argv) {
  using namespace portcullis;
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string config_path;
  if (args.size() >= 2 && args[0] == "--config") {
    config_path = args[1];
    args.erase(args.begin(), args.begin() + 2);
  }
  if (args.empty() || args[0] == "--help" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "doctor" && args.size() == 1) return cli::doctor(config_path);
  auto config = config::load(config_path);
  if (!config) return fail(config.status());
  log::init("cli", log::parse_level(config->log_level, log::Level::kWarn));
  auto master_key = crypto::MasterKey::load_file(config->master_key_file);
  if (!master_key) return fail(master_key.status());
  store::init_driver();
  Env env{*config, store::Db(config->db), std::move(master_key).value()};

  std::string command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "migrate" && rest.empty()) return cmd_migrate(env);
  if (command == "bootstrap" && rest.empty()) return cmd_bootstrap(env);
  if (command == "keys") return cmd_keys(env, rest);
  if (command == "clients") return cmd_clients(env, rest);
  if (command == "oauth-clients") return cmd_oauth_clients(env, rest);
  if (command == "events") return cmd_events(env, rest);
  std::fputs(kUsage, stderr);
  return 2;
}
