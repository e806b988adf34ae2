#include "config/config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

extern char** environ;

namespace portcullis::config {
namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::invalid_argument("cannot read " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

Result<int64_t> parse_int(const Settings& s, const std::string& key, int64_t fallback, int64_t min,
                          int64_t max) {
  auto it = s.find(key);
  if (it == s.end() || it->second.empty()) return fallback;
  int64_t v = 0;
  const std::string& text = it->second;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::invalid_argument(key + " must be an integer");
  }
  if (v < min || v > max) {
    return Status::invalid_argument(key + " must be between " + std::to_string(min) + " and " +
                                    std::to_string(max));
  }
  return v;
}

std::string get(const Settings& s, const std::string& key, const std::string& fallback = "") {
  auto it = s.find(key);
  return it == s.end() || it->second.empty() ? fallback : it->second;
}

// A value that ends up in an SMTP command or a mail header: one line, printable.
bool is_header_safe(std::string_view v) {
  for (unsigned char ch : v) {
    if (ch < 0x20 || ch == 0x7f) return false;
  }
  return true;
}

Status load_smtp(const Settings& s, Config::Smtp& smtp) {
  smtp.url = get(s, "PORTCULLIS_SMTP_URL");
  smtp.from = get(s, "PORTCULLIS_SMTP_FROM");
  smtp.user = get(s, "PORTCULLIS_SMTP_USER");
  std::string password_file = get(s, "PORTCULLIS_SMTP_PASSWORD_FILE");
  if (smtp.url.empty()) {
    if (!smtp.from.empty() || !smtp.user.empty() || !password_file.empty()) {
      return Status::invalid_argument("PORTCULLIS_SMTP_* settings need PORTCULLIS_SMTP_URL");
    }
    return Status::ok();
  }
  std::string_view url = smtp.url;
  std::string_view rest;
  if (url.rfind("smtps://", 0) == 0) {
    rest = url.substr(8);
  } else if (url.rfind("smtp://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return Status::invalid_argument("PORTCULLIS_SMTP_URL must start with smtp:// or smtps://");
  }
  // Credentials belong in PORTCULLIS_SMTP_USER and the password file, never in a URL that
  // ends up in process listings and logs.
  if (rest.empty() || rest.front() == '/' || rest.find('@') != std::string_view::npos ||
      rest.find_first_of("?# ") != std::string_view::npos || !is_header_safe(rest)) {
    return Status::invalid_argument(
        "PORTCULLIS_SMTP_URL must be smtp[s]://host[:port] without credentials, query or "
        "fragment");
  }
  if (smtp.from.empty()) {
    return Status::invalid_argument("PORTCULLIS_SMTP_FROM is required with PORTCULLIS_SMTP_URL");
  }
  if (!is_header_safe(smtp.from) || smtp.from.find('@') == std::string::npos) {
    return Status::invalid_argument("PORTCULLIS_SMTP_FROM must be one line holding an address");
  }
  if (!is_header_safe(smtp.user)) {
    return Status::invalid_argument("PORTCULLIS_SMTP_USER must be one printable line");
  }
  if (!password_file.empty()) {
    if (smtp.user.empty()) {
      return Status::invalid_argument("PORTCULLIS_SMTP_PASSWORD_FILE needs PORTCULLIS_SMTP_USER");
    }
    PORTCULLIS_ASSIGN_OR_RETURN(std::string pw, read_file(password_file));
    smtp.password = trim(pw);
  } else if (!smtp.user.empty()) {
    return Status::invalid_argument("PORTCULLIS_SMTP_USER needs PORTCULLIS_SMTP_PASSWORD_FILE");
  }
  return Status::ok();
}

}  // namespace

Result<Settings> parse_settings(const std::string& text) {
  Settings out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (t.rfind("export ", 0) == 0) t = trim(t.substr(7));
    size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::invalid_argument("config line " + std::to_string(number) +
                                      ": expected KEY=value");
    }
    std::string key = trim(t.substr(0, eq));
    std::string value = trim(t.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    for (char c : key) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) {
        return Status::invalid_argument("config line " + std::to_string(number) + ": bad key name");
      }
    }
    out[key] = value;
  }
  return out;
}

Result<Config> from_settings(const Settings& s) {
  Config c;
  c.base_url = get(s, "PORTCULLIS_BASE_URL");
  while (!c.base_url.empty() && c.base_url.back() == '/') c.base_url.pop_back();
  if (c.base_url.empty()) return Status::invalid_argument("PORTCULLIS_BASE_URL is required");
  if (c.base_url.rfind("https://", 0) != 0 && c.base_url.rfind("http://", 0) != 0) {
    return Status::invalid_argument("PORTCULLIS_BASE_URL must start with https:// or http://");
  }
  if (c.base_url.find_first_of("?#") != std::string::npos) {
    return Status::invalid_argument("PORTCULLIS_BASE_URL must not have a query or fragment");
  }
  c.mode = get(s, "PORTCULLIS_MODE", "production");
  if (c.mode != "production" && c.mode != "local") {
    return Status::invalid_argument("PORTCULLIS_MODE must be production or local");
  }
  if (c.mode == "production" && c.base_url.rfind("https://", 0) != 0) {
    return Status::invalid_argument("PORTCULLIS_BASE_URL must be https:// in production mode");
  }

  c.db.socket = get(s, "PORTCULLIS_DB_SOCKET");
  c.db.host = get(s, "PORTCULLIS_DB_HOST", c.db.host);
  PORTCULLIS_ASSIGN_OR_RETURN(int64_t port, parse_int(s, "PORTCULLIS_DB_PORT", 3306, 1, 65535));
  c.db.port = static_cast<int>(port);
  c.db.name = get(s, "PORTCULLIS_DB_NAME", c.db.name);
  c.db.user = get(s, "PORTCULLIS_DB_USER", c.db.user);
  c.db.password = get(s, "PORTCULLIS_DB_PASSWORD");
  if (std::string pw_file = get(s, "PORTCULLIS_DB_PASSWORD_FILE"); !pw_file.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(std::string pw, read_file(pw_file));
    c.db.password = trim(pw);
  }

  c.master_key_file = get(s, "PORTCULLIS_MASTER_KEY_FILE");
  if (c.master_key_file.empty()) {
    return Status::invalid_argument("PORTCULLIS_MASTER_KEY_FILE is required");
  }
  PORTCULLIS_ASSIGN_OR_RETURN(int64_t workers, parse_int(s, "PORTCULLIS_WORKERS", 0, 0, 256));
  c.workers = static_cast<int>(workers);
  PORTCULLIS_ASSIGN_OR_RETURN(int64_t wellknown_workers,
                              parse_int(s, "PORTCULLIS_WELLKNOWN_WORKERS", 0, 0, 256));
  c.wellknown_workers = static_cast<int>(wellknown_workers);
  c.log_level = get(s, "PORTCULLIS_LOG_LEVEL", "info");
  c.var_dir = get(s, "PORTCULLIS_VAR_DIR");
  // The pools' shared metrics blocks (lib/core/telemetry.h); empty = no metrics.
  c.metrics_dir = get(s, "PORTCULLIS_METRICS_DIR", c.var_dir.empty() ? "" : c.var_dir + "/metrics");
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.key_prepublish_seconds,
      parse_int(s, "PORTCULLIS_KEY_PREPUBLISH_SECONDS", 3600, 1, 30 * 86400));
  PORTCULLIS_ASSIGN_OR_RETURN(c.jwks_max_age_seconds,
                              parse_int(s, "PORTCULLIS_JWKS_MAX_AGE_SECONDS", 300, 0, 30 * 86400));
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.management_token_lifetime_seconds,
      parse_int(s, "PORTCULLIS_MANAGEMENT_TOKEN_TTL_SECONDS", 3600, 60, 86400));
  PORTCULLIS_ASSIGN_OR_RETURN(c.keyring_refresh_seconds,
                              parse_int(s, "PORTCULLIS_KEYRING_REFRESH_SECONDS", 30, 1, 3600));
  // After a rotation, /keys shows the new key to a client once the workers have re-read the
  // key ring, the node's nginx cache has let its copy go, and the client's own cache has
  // (max-age): a key published for less than the three could sign tokens a client cannot yet
  // verify. So the window must outlast the first two, and it bounds the max-age.
  const int64_t publishing = c.keyring_refresh_seconds + kNginxDocumentCacheSeconds;
  if (c.key_prepublish_seconds <= publishing) {
    return Status::invalid_argument(
        "PORTCULLIS_KEY_PREPUBLISH_SECONDS must be more than PORTCULLIS_KEYRING_REFRESH_SECONDS "
        "+ " +
        std::to_string(kNginxDocumentCacheSeconds) + " (nginx's cache of /keys): " +
        std::to_string(c.key_prepublish_seconds) + " <= " + std::to_string(publishing));
  }
  c.jwks_max_age_seconds = std::min(c.jwks_max_age_seconds, c.key_prepublish_seconds - publishing);
  PORTCULLIS_ASSIGN_OR_RETURN(c.worker_busy_limit_ms,
                              parse_int(s, "PORTCULLIS_WORKER_BUSY_LIMIT_MS", 10000, 0, 3600000));
  PORTCULLIS_ASSIGN_OR_RETURN(c.fastcgi_keepalive_idle_ms,
                              parse_int(s, "PORTCULLIS_FASTCGI_KEEPALIVE_IDLE_MS", 3000, 0, 60000));
  PORTCULLIS_ASSIGN_OR_RETURN(c.fastcgi_max_connections,
                              parse_int(s, "PORTCULLIS_FASTCGI_MAX_CONNECTIONS", 64, 1, 4096));
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.validator_denylist_sync_ms,
      parse_int(s, "PORTCULLIS_VALIDATOR_DENYLIST_SYNC_MS", 1000, 100, 60000));
  PORTCULLIS_ASSIGN_OR_RETURN(c.validator_event_flush_ms,
                              parse_int(s, "PORTCULLIS_VALIDATOR_EVENT_FLUSH_MS", 1000, 0, 60000));
  PORTCULLIS_ASSIGN_OR_RETURN(c.validator_nginx_cache_seconds,
                              parse_int(s, "PORTCULLIS_VALIDATOR_NGINX_CACHE_SECONDS", 1, 0, 60));
  PORTCULLIS_ASSIGN_OR_RETURN(int64_t dcr_rate,
                              parse_int(s, "PORTCULLIS_RATE_LIMIT_DCR_PER_MINUTE", 30, 0, 1000000));
  PORTCULLIS_ASSIGN_OR_RETURN(
      int64_t email_rate,
      parse_int(s, "PORTCULLIS_RATE_LIMIT_SIGNIN_CODES_PER_10_MINUTES", 5, 0, 1000000));
  PORTCULLIS_ASSIGN_OR_RETURN(
      int64_t ip_rate,
      parse_int(s, "PORTCULLIS_RATE_LIMIT_SIGNIN_CODES_PER_MINUTE_PER_IP", 60, 0, 1000000));
  PORTCULLIS_ASSIGN_OR_RETURN(
      int64_t token_rate,
      parse_int(s, "PORTCULLIS_RATE_LIMIT_TOKEN_PER_MINUTE", 1200, 0, 100000000));
  c.rate_limits.dcr_per_minute_per_ip = static_cast<int>(dcr_rate);
  c.rate_limits.signin_codes_per_10_minutes_per_email = static_cast<int>(email_rate);
  c.rate_limits.signin_codes_per_minute_per_ip = static_cast<int>(ip_rate);
  c.rate_limits.token_per_minute_per_client = static_cast<int>(token_rate);
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.refresh_token_idle_seconds,
      parse_int(s, "PORTCULLIS_REFRESH_TOKEN_IDLE_SECONDS", 30 * 86400, 60, 3650 * 86400LL));
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.refresh_token_absolute_seconds,
      parse_int(s, "PORTCULLIS_REFRESH_TOKEN_ABSOLUTE_SECONDS", 90 * 86400, 60, 3650 * 86400LL));
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.dcr_client_retention_seconds,
      parse_int(s, "PORTCULLIS_DCR_CLIENT_RETENTION_SECONDS", 30 * 86400, 60, 3650 * 86400LL));
  // The list is held in a named string: a string_view of get()'s temporary would dangle.
  // PORTCULLIS_OUTBOUND_ALLOW_HOSTS (contract §12) holds for every outbound fetch, CIMD too;
  // PORTCULLIS_CIMD_ALLOW_HOSTS keeps working for CIMD only.
  const std::string outbound_hosts = get(s, "PORTCULLIS_OUTBOUND_ALLOW_HOSTS");
  const std::string allow_hosts = get(s, "PORTCULLIS_CIMD_ALLOW_HOSTS");
  for (const std::string* list : {&outbound_hosts, &allow_hosts}) {
    for (std::string_view rest = *list; !rest.empty();) {
      size_t comma = rest.find(',');
      std::string host = trim(rest.substr(0, comma));
      if (!host.empty()) {
        if (list == &outbound_hosts) c.outbound_allow_hosts.push_back(host);
        c.cimd_allow_hosts.push_back(host);
      }
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  c.outbound_ca_file = get(s, "PORTCULLIS_OUTBOUND_CA_FILE");
  PORTCULLIS_ASSIGN_OR_RETURN(c.dns_nameserver,
                              dns::parse_nameserver(get(s, "PORTCULLIS_DNS_NAMESERVER")));
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.session_lifetime_seconds,
      parse_int(s, "PORTCULLIS_SESSION_TTL_SECONDS", 12 * 3600, 300, 30 * 86400));
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.admin_idle_timeout_seconds,
      parse_int(s, "PORTCULLIS_ADMIN_IDLE_TIMEOUT_SECONDS", 30 * 60, 60, 24 * 3600));
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.admin_session_lifetime_seconds,
      parse_int(s, "PORTCULLIS_ADMIN_SESSION_TTL_SECONDS", 8 * 3600, 300, 7 * 86400));
  PORTCULLIS_ASSIGN_OR_RETURN(c.dpop_iat_leeway_seconds,
                              parse_int(s, "PORTCULLIS_DPOP_IAT_LEEWAY_SECONDS", 60, 1, 3600));
  PORTCULLIS_RETURN_IF_ERROR(load_smtp(s, c.smtp));
  if (const std::string schedule = get(s, "PORTCULLIS_WEBHOOK_RETRY_SCHEDULE"); !schedule.empty()) {
    c.webhooks.retry_schedule_seconds.clear();
    for (std::string_view rest = schedule; !rest.empty();) {
      size_t comma = rest.find(',');
      std::string item = trim(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      char* end = nullptr;
      long long v = item.empty() ? -1 : std::strtoll(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v < 1 || v > 7 * 86400) {
        return Status::invalid_argument(
            "PORTCULLIS_WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of 1 to 20 "
            "waits in seconds (1..604800)");
      }
      c.webhooks.retry_schedule_seconds.push_back(v);
    }
    if (c.webhooks.retry_schedule_seconds.size() > 20) {
      return Status::invalid_argument("PORTCULLIS_WEBHOOK_RETRY_SCHEDULE has more than 20 waits");
    }
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.webhooks.disable_after_seconds,
      parse_int(s, "PORTCULLIS_WEBHOOK_DISABLE_AFTER_SECONDS", 86400, 1, 30 * 86400));
  PORTCULLIS_ASSIGN_OR_RETURN(c.webhooks.timeout_ms,
                              parse_int(s, "PORTCULLIS_WEBHOOK_TIMEOUT_MS", 10000, 100, 60000));
  PORTCULLIS_ASSIGN_OR_RETURN(c.webhooks.poll_ms,
                              parse_int(s, "PORTCULLIS_WEBHOOK_POLL_MS", 1000, 10, 60000));
  PORTCULLIS_ASSIGN_OR_RETURN(c.webhooks.lease_seconds,
                              parse_int(s, "PORTCULLIS_WEBHOOK_LEASE_SECONDS", 60, 5, 3600));
  PORTCULLIS_ASSIGN_OR_RETURN(int64_t webhook_batch,
                              parse_int(s, "PORTCULLIS_WEBHOOK_BATCH", 50, 1, 1000));
  c.webhooks.batch = static_cast<int>(webhook_batch);
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.webhooks.secret_overlap_seconds,
      parse_int(s, "PORTCULLIS_WEBHOOK_SECRET_OVERLAP_SECONDS", 86400, 0, 30 * 86400));
  PORTCULLIS_ASSIGN_OR_RETURN(
      c.event_retention_seconds,
      parse_int(s, "PORTCULLIS_EVENT_RETENTION_SECONDS", 90 * 86400, 60, 3650 * 86400LL));
  PORTCULLIS_ASSIGN_OR_RETURN(c.scim_checkpoint_every,
                              parse_int(s, "PORTCULLIS_SCIM_CHECKPOINT_EVERY", 10000, 2, 1000000));
  c.demo_resource_id = get(s, "PORTCULLIS_DEMO_RESOURCE_ID");
  if (!c.demo_resource_id.empty() && c.demo_resource_id.rfind("res_", 0) != 0) {
    return Status::invalid_argument("PORTCULLIS_DEMO_RESOURCE_ID must be a resource id (res_...)");
  }
  return c;
}

Result<Config> load(const std::string& path_in) {
  std::string path = path_in;
  if (path.empty()) {
    if (const char* p = std::getenv("PORTCULLIS_CONFIG")) path = p;
  }
  Settings settings;
  if (!path.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(std::string text, read_file(path));
    auto parsed = parse_settings(text);
    if (!parsed) return Status::invalid_argument(path + ": " + parsed.status().message());
    settings = std::move(parsed).value();
  }
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (kv.rfind("PORTCULLIS_", 0) != 0) continue;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    settings[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  return from_settings(settings);
}

}  // namespace portcullis::config
