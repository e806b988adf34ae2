#include "cimd/resolve.h"

#include <cctype>

#include "cimd/cache.h"
#include "cimd/client_id_url.h"
#include "cimd/document.h"
#include "cimd/freshness.h"
#include "log/log.h"
#include "outbound/https_get.h"

namespace portcullis::cimd {
namespace {

// The draft's recommended limits, fixed by contract §2.2.
constexpr std::chrono::milliseconds kFetchTimeout{5000};
constexpr std::chrono::milliseconds kConnectTimeout{3000};

outbound::Options fetch_options(const config::Config& config) {
  outbound::Options options;
  options.allow_hosts = config.cimd_allow_hosts;
  options.ca_file = config.outbound_ca_file;
  options.max_body_bytes = kMaxDocumentBytes;
  options.timeout = kFetchTimeout;
  options.connect_timeout = kConnectTimeout;
  options.accept = "application/json";
  return options;
}

Result<outbound::Response> fetch(const ClientIdUrl& url, const config::Config& config) {
  auto response = outbound::https_get(url.url, fetch_options(config));
  const std::string where =
      "Could not fetch the application's metadata document from " + url.parsed.host + ": ";
  if (!response) {
    if (response.status().code() == Code::kInternal) {
      log::error("CIMD fetch impossible", {{"error", response.status().message()}});
    }
    return invalid_client(where + response.status().message() + ".");
  }
  if (response->status != 200) {
    return invalid_client(where + "the server answered HTTP " + std::to_string(response->status) +
                          " instead of 200.");
  }
  return response;
}

}  // namespace

bool looks_like_cimd_client_id(std::string_view client_id) {
  constexpr std::string_view kPrefix = "https://";
  if (client_id.size() < kPrefix.size()) return false;
  for (size_t i = 0; i < kPrefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(client_id[i])) != kPrefix[i]) return false;
  }
  return true;
}

Result<oauth::ClientInfo> resolve_client(store::Db& db, const config::Config& config,
                                         std::string_view client_id, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(ClientIdUrl url, validate_client_id_url(client_id));

  PORTCULLIS_ASSIGN_OR_RETURN(std::optional<std::string> cached,
                              load_fresh_document(db, url.url, now));
  if (cached) {
    auto info = validate_document(url, *cached);
    if (info) return info;
    // Only valid documents are stored, so this one predates a stricter rule: fetch afresh.
    log::info("cached CIMD document no longer valid", {{"host", url.parsed.host}});
  }

  PORTCULLIS_ASSIGN_OR_RETURN(outbound::Response response, fetch(url, config));
  auto info = validate_document(url, response.body);
  if (!info) {
    log::info("CIMD document refused",
              {{"host", url.parsed.host}, {"reason", info.status().message()}});
    return info;
  }
  const std::string cache_control = response.header("cache-control");
  const std::string expires = response.header("expires");
  const std::string date = response.header("date");
  const std::string age = response.header("age");
  int64_t fresh = cache_seconds({cache_control, expires, date, age}, now);
  if (Status st = store_document(db, url.url, response.body, now, now + fresh); !st.is_ok()) {
    // The cache only saves fetches: this sign-in may go on with the document it just checked.
    log::warn("CIMD document not cached", {{"error", st.message()}});
  }
  return info;
}

}  // namespace portcullis::cimd
