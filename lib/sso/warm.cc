#include "sso/warm.h"

#include <algorithm>
#include <set>

#include "log/log.h"
#include "sso/connection_store.h"
#include "sso/oidc_client.h"
#include "sso/saml_sp.h"

namespace portcullis::sso {

Status ConnectionWarmer::prepare(const std::string& id, int64_t now) {
  ConnectionStore connections(db_, master_key_);
  PORTCULLIS_ASSIGN_OR_RETURN(Connection c, connections.find(id));
  if (c.state != "active") return Status::ok();
  if (c.type == "saml") {
    PORTCULLIS_ASSIGN_OR_RETURN(SamlSp sp, connections.saml_sp(c, base_url_, now));
    return prepare_server(c, sp);
  }
  // The client secret is not needed for discovery and keys.
  return OidcClient(OidcClientConfig{c.issuer, c.client_id, "", c.scopes}, outbound_).prefetch(now);
}

Result<ConnectionWarmer::Tick> ConnectionWarmer::tick(int64_t now,
                                                      std::chrono::milliseconds budget) {
  const auto started = std::chrono::steady_clock::now();
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::vector<ConnectionStore::Version> versions,
      ConnectionStore(db_, master_key_).active_versions(kMaxWarmConnections));
  std::set<std::string> active;
  for (const auto& v : versions) active.insert(v.id);
  std::erase_if(known_, [&](const auto& k) { return active.find(k.first) == active.end(); });
  // The whole list: what is not in it is no longer active.
  if (versions.size() < kMaxWarmConnections) keep_servers_of(active);

  Tick out;
  for (const auto& v : versions) {
    Known& k = known_[v.id];
    const bool changed = k.update_time != v.update_time;
    const bool due = k.failures == 0
                         ? v.type == "oidc" && now - k.prepared_at >= kOidcRefreshSeconds
                         : now >= k.retry_at;
    if (!changed && !due) continue;
    if (std::chrono::steady_clock::now() - started >= budget) {
      ++out.left;
      continue;
    }
    const auto begun = std::chrono::steady_clock::now();
    Status st = prepare(v.id, now);
    const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - begun)
                             .count();
    k.update_time = v.update_time;
    if (st.is_ok()) {
      k.prepared_at = now;
      k.failures = 0;
      ++out.prepared;
      log::debug("sso connection prepared", {{"connection_id", v.id}, {"ms", ms}});
    } else {
      k.failures = std::min(k.failures + 1, 7);
      k.retry_at = now + std::min<int64_t>(int64_t{60} << (k.failures - 1), kWarmRetryMaxSeconds);
      log::info("sso connection not prepared; a sign-in will try itself",
                {{"connection_id", v.id}, {"error", st.message()}, {"ms", ms}});
    }
  }
  return out;
}

}  // namespace portcullis::sso
