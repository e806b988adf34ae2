// Keeps a worker's per-connection SSO state ready so that no sign-in builds it (issue 13: the
// whole SSO login adds < 50 ms of server time over the IdP's own, docs/sso.md "Cold starts").
//
// What a sign-in would otherwise pay on a worker's first use of a connection:
//  - SAML: the Lasso server (SP metadata and keys, the IdP's metadata parsed; 100–300 ms);
//  - OIDC: the discovery document and the JWKS (two TLS round trips to the IdP).
// A worker runs `tick` as it starts, before it accepts a request, and then between requests
// about once a second (server::App::add_idle_task). Each tick reads the active connections'
// versions (id, update_time; one index range read, at most kMaxWarmConnections, newest change
// first) and prepares those that are new or changed since it last did, and the OIDC ones whose
// metadata it fetched more than kOidcRefreshSeconds ago; it drops the Lasso servers of
// connections no longer active. A tick spends at most its budget preparing; the rest waits for
// the next tick. A connection whose preparation failed (IdP down, metadata refused) is tried
// again after 1, 2, 4 … up to 60 minutes.
//
// Staleness is bounded and never a correctness matter: a sign-in always checks that the cached
// Lasso server is of the connection's current configuration (saml_sp.h) and builds it itself
// when a change is younger than the worker's last tick (about a second); discovery documents
// and key sets are used for at most kDiscoveryCacheSeconds / kJwksCacheSeconds as before
// (oidc_client.h), refreshed here every kOidcRefreshSeconds, so they do not expire on the
// request path of a worker that ticks.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "core/status.h"
#include "crypto/aead.h"
#include "outbound/https_get.h"
#include "store/db.h"

namespace portcullis::sso {

inline constexpr size_t kMaxWarmConnections = 200;
inline constexpr int64_t kOidcRefreshSeconds = 1800;
inline constexpr int64_t kWarmRetryMaxSeconds = 3600;

class ConnectionWarmer {
 public:
  ConnectionWarmer(store::Db& db, const crypto::MasterKey& master_key, std::string base_url,
                   outbound::Options outbound)
      : db_(db),
        master_key_(master_key),
        base_url_(std::move(base_url)),
        outbound_(std::move(outbound)) {}

  struct Tick {
    int prepared = 0;  // connections prepared by this tick
    int left = 0;      // connections due that the budget left for the next tick
  };
  // Prepares what is due within `budget`; `now` in Unix seconds.
  Result<Tick> tick(int64_t now, std::chrono::milliseconds budget);

 private:
  struct Known {
    std::string update_time;  // the version prepared
    int64_t prepared_at = 0;
    int failures = 0;
    int64_t retry_at = 0;
  };
  Status prepare(const std::string& id, int64_t now);

  store::Db& db_;
  const crypto::MasterKey& master_key_;
  std::string base_url_;
  outbound::Options outbound_;
  std::map<std::string, Known> known_;
};

}  // namespace portcullis::sso
