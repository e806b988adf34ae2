// Is a client_id usable as a Client ID Metadata Document URL (contract §2.2, CIMD draft §3)?
//
// Beyond outbound::parse_https_url (https only, no userinfo, no fragment, one reading of the
// host), a client_id URL must have a path other than "/", no "." or ".." segment (written
// plainly or %-encoded: servers decode them), and no query string: the draft says SHOULD NOT,
// and refusing it keeps one document one URL (a query would let a caller mint endless cache
// keys, and fetches, for the same document). At most kMaxClientIdBytes.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "outbound/url.h"

namespace portcullis::cimd {

inline constexpr size_t kMaxClientIdBytes = 2000;

// The path of the seed's document form, whose client_id is the URL's origin (contract §2.2).
inline constexpr std::string_view kClientConfigurationPath = "/.well-known/client-configuration";

struct ClientIdUrl {
  std::string url;  // exactly as presented
  outbound::HttpsUrl parsed;
};

// InvalidArgument (reason invalid_client) whose message is a sentence for the user's error page.
Result<ClientIdUrl> validate_client_id_url(std::string_view client_id);

// InvalidArgument, reason invalid_client: the one error shape every CIMD failure takes, since
// the authorization endpoint shows it on an HTML page (contract §2.2) rather than redirecting.
Status invalid_client(std::string message);

}  // namespace portcullis::cimd
