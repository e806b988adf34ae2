// The entry point for the authorization and token endpoints: turns a client_id that is a
// Client ID Metadata Document URL into the client it describes (contract §2.2).
//
//   validate the URL (client_id_url.h) → fresh cached copy? (cache.h) → otherwise fetch it
//   through the SSRF guard (outbound/https_get.h: 5 KB, 5 s, no redirects, public addresses
//   only unless PORTCULLIS_CIMD_ALLOW_HOSTS names the host) → HTTP 200 only → validate the
//   document (document.h) → cache it for cache_seconds() (freshness.h) → ClientInfo.
//
// A cached document is re-validated on every use, so rules tightened by an upgrade apply to
// documents cached before it. The caller still checks that the resource's CIMD switch is on and
// matches the request's redirect_uri against ClientInfo::redirect_uris.
#pragma once

#include <cstdint>
#include <string_view>

#include "clients/client_info.h"
#include "config/config.h"
#include "core/status.h"
#include "store/db.h"

namespace portcullis::cimd {

// True when the client_id is meant as a metadata document URL: it starts with "https://"
// (scheme compared case-insensitively, so "HTTPS://…" gets resolve_client's explanation rather
// than "unknown client"). Says nothing about validity.
bool looks_like_cimd_client_id(std::string_view client_id);

// The client, with client_id exactly as presented and token_endpoint_auth_method "none".
// Errors: InvalidArgument with reason invalid_client and a message written for the HTML error
// page the authorization endpoint shows (no redirect): what is wrong with the URL, why the
// document could not be fetched, or which rule it breaks. A database failure is passed through
// unchanged (Unavailable: 503), since it says nothing about the client.
Result<oauth::ClientInfo> resolve_client(store::Db& db, const config::Config& config,
                                         std::string_view client_id, int64_t now);

}  // namespace portcullis::cimd
