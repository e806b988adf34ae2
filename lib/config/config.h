// Service configuration: a file of `KEY=value` lines using the same names as the environment
// (so one file serves systemd's EnvironmentFile= and `--config`), then PORTCULLIS_* environment
// variables on top. Loaded and validated once at start (and again on SIGHUP); a worker never
// re-reads it mid-request.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "dns/nameserver.h"

namespace portcullis::config {

// How long a node's nginx may answer /keys and the metadata from its cache without asking a
// worker: `fastcgi_cache_valid 200 1s` in nginx/portcullis/document-cache.conf, which nginx
// counts in whole seconds (more than 1 s, at most 2 s).
inline constexpr int64_t kNginxDocumentCacheSeconds = 2;

struct DbConfig {
  std::string socket;  // unix socket path; when empty, host + port are used
  std::string host = "127.0.0.1";
  int port = 3306;
  std::string name = "portcullis";
  std::string user = "portcullis";
  std::string password;
  int connect_timeout_seconds = 3;
  int read_timeout_seconds = 10;
  int write_timeout_seconds = 10;
};

struct Config {
  std::string base_url;  // no trailing slash; issuers and endpoint URLs are built from it
  DbConfig db;
  std::string master_key_file;
  int workers = 0;  // 0 = one per CPU
  // portcullis-wellknown's own count (PORTCULLIS_WELLKNOWN_WORKERS; 0 = one per CPU, whatever
  // PORTCULLIS_WORKERS says): its requests (validations, documents) never wait on the database,
  // so a worker more than the CPUs only adds a process to wake per request (bench/README.md,
  // "The validator's subrequest").
  int wellknown_workers = 0;
  // The master's watchdog: a worker busy on one request longer than this is killed and
  // replaced (runtime/watchdog.h). 0 = off.
  int64_t worker_busy_limit_ms = 10000;
  // Kept-alive FastCGI (docs/operations.md, "Kept-alive FastCGI"): how long a worker keeps a
  // connection nginx asked it to keep (FCGI_KEEP_CONN) without a request before closing it. Must
  // exceed nginx's upstream keepalive_timeout, so that nginx, not the worker, closes an idle
  // connection. 0 = close after every request.
  int64_t fastcgi_keepalive_idle_ms = 3000;
  // Connections one worker holds at once (runtime/fastcgi_loop.h ServeOptions::max_connections).
  int64_t fastcgi_max_connections = 64;
  std::string log_level = "info";
  std::string mode = "production";  // or "local" (mail to the outbox, relaxed checks for dev)
  std::string var_dir;              // local mode: where the outbox and runtime files live
  // Where each pool keeps its shared metrics block (<pool>.metrics) and /metrics reads them;
  // default <var_dir>/metrics, empty = no metrics.
  std::string metrics_dir;
  // A new signing key is published this long before it signs anything (contract §1); more
  // than keyring_refresh_seconds + kNginxDocumentCacheSeconds.
  int64_t key_prepublish_seconds = 3600;
  // /keys Cache-Control max-age; at most the pre-publication window less the key ring's
  // refresh and nginx's cache (from_settings lowers it).
  int64_t jwks_max_age_seconds = 300;
  // How often a worker re-reads the key ring from the store to learn of rotations.
  int64_t keyring_refresh_seconds = 30;
  // Lifetime of management API tokens (client_credentials at the environment issuer).
  int64_t management_token_lifetime_seconds = 3600;
  // Longest access-token lifetime any resource may set: a retired key stays published this long.
  int64_t max_token_lifetime_seconds = 86400;

  // Rate limits (contract §0): requests allowed per window; 0 disables a limit.
  struct RateLimits {
    int dcr_per_minute_per_ip = 30;
    int signin_codes_per_10_minutes_per_email = 5;
    int signin_codes_per_minute_per_ip = 60;
    int token_per_minute_per_client = 1200;
  } rate_limits;

  // The nginx auth_request validator (docs/protecting-mcp-servers.md). A revoked access token
  // is refused by every validator worker at most this long after its revocation (each worker
  // re-reads the deny-list this often)...
  int64_t validator_denylist_sync_ms = 1000;
  // ...and validation events are written in batches at most this often per worker; 0 records
  // none (for benchmarks only: bench/mcp-validator BENCH_VALIDATION_EVENTS=both).
  int64_t validator_event_flush_ms = 1000;
  // How long nginx may reuse a 204 when the micro-cache snippet (mcp-validate-cached.conf) is
  // used: X-Accel-Expires on the validator's answers. Adds to the revocation bound.
  int64_t validator_nginx_cache_seconds = 1;

  // Refresh tokens: idle and absolute lifetimes (contract §4).
  int64_t refresh_token_idle_seconds = 30 * 86400;
  int64_t refresh_token_absolute_seconds = 90 * 86400;
  // DCR clients unused this long, with no live grant, are pruned.
  int64_t dcr_client_retention_seconds = 30 * 86400;

  // Outbound HTTPS (CIMD documents, IdP metadata, webhooks).
  std::vector<std::string> cimd_allow_hosts;  // "host" or "host:port": exempt from the SSRF guard
  std::vector<std::string> outbound_allow_hosts;  // the same for every outbound fetch (IdPs, …)
  std::string outbound_ca_file;                   // extra CA bundle, added to the system's

  // Where organization domain verification asks for TXT records (PORTCULLIS_DNS_NAMESERVER;
  // empty = the system's resolvers).
  dns::Nameserver dns_nameserver;
  // DPoP proofs (RFC 9449): iat may differ from now by at most this, and a proof's jti is
  // remembered this long; it bounds both a proof's lifetime and the clock skew tolerated.
  int64_t dpop_iat_leeway_seconds = 60;

  // Browser sessions after sign-in (the session cookie's lifetime).
  int64_t session_lifetime_seconds = 12 * 3600;
  // Admin portal sessions (docs/admin.md): ended after this long without a request
  // (PORTCULLIS_ADMIN_IDLE_TIMEOUT_SECONDS) and this long after sign-in whatever happens
  // (PORTCULLIS_ADMIN_SESSION_TTL_SECONDS).
  int64_t admin_idle_timeout_seconds = 30 * 60;
  int64_t admin_session_lifetime_seconds = 8 * 3600;

  // Passwordless e-mail in production (local mode writes <var_dir>/mail/outbox.jsonl instead).
  struct Smtp {
    std::string url;       // smtps://host[:port] (TLS from the start) or smtp://host[:port]
                           // (STARTTLS, always required); empty = e-mail cannot be sent
    std::string from;      // "Portcullis <no-reply@example.com>" or a bare address
    std::string user;      // empty = no SMTP AUTH
    std::string password;  // read from PORTCULLIS_SMTP_PASSWORD_FILE
  } smtp;

  // The demo MCP server (portcullis-demo-mcp, contract §12): the resource it serves, whose
  // server URL is its own URL and the audience of the tokens it accepts. Empty elsewhere.
  std::string demo_resource_id;

  // Events and webhooks (docs/events.md).
  struct Webhooks {
    // Seconds to wait after each failed attempt: the n-th failure waits schedule[n-1] (± 20 %
    // jitter); after the last one the delivery is given up. 5 s … 10 h, 8 attempts by default.
    std::vector<int64_t> retry_schedule_seconds = {5, 60, 300, 1800, 7200, 18000, 36000};
    // An endpoint failing (no 2xx) continuously this long is disabled (event webhook.disabled).
    int64_t disable_after_seconds = 86400;
    int64_t timeout_ms = 10000;              // one attempt, name lookup to last byte
    int64_t poll_ms = 1000;                  // how often an idle delivery process looks for work
    int64_t lease_seconds = 60;              // a claimed delivery is due again after this (crashes)
    int batch = 50;                          // deliveries claimed per round
    int64_t secret_overlap_seconds = 86400;  // default overlap of a secret rotation
  } webhooks;
  // Events older than this are deleted by `portcullis events prune`.
  int64_t event_retention_seconds = 90 * 86400;
  // Rows between two checkpoints of a SCIM user list (docs/scim.md §7): a cold jump to any
  // startIndex skips fewer than this many index entries. PORTCULLIS_SCIM_CHECKPOINT_EVERY.
  int64_t scim_checkpoint_every = 10000;

  bool is_local() const { return mode == "local"; }
};

// The raw KEY=value pairs after the file and the environment were merged (for tools and tests).
using Settings = std::map<std::string, std::string>;

// Parses `KEY=value` lines: blank lines and `#` comments are skipped, values may be wrapped in
// single or double quotes, `export ` prefixes are accepted. Returns the line number of a bad line.
Result<Settings> parse_settings(const std::string& text);

// Reads `path` (when non-empty), overlays every PORTCULLIS_* variable of the environment,
// validates and returns the config. The path defaults to $PORTCULLIS_CONFIG when empty.
Result<Config> load(const std::string& path);

// Validates merged settings into a Config (separate from load() so tests need no files).
Result<Config> from_settings(const Settings& settings);

}  // namespace portcullis::config
