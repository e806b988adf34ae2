// The operator's exemptions from the special-address guard (PORTCULLIS_CIMD_ALLOW_HOSTS,
// contract §12): tests serve documents from 127.0.0.1 and private deployments may fetch from
// their own network. An exemption lifts only the address check; https, certificate
// verification, no redirects, the size cap and the timeout still apply, and the connection
// still goes to the addresses resolved and pinned for that one request.
#pragma once

#include <string>
#include <vector>

#include "outbound/url.h"

namespace portcullis::outbound {

// True when an entry names the URL's host: "host" (any port) or "host:port" (that port only).
// IPv6 entries are bracketed ("[::1]", "[::1]:8443"). Host names compare case-insensitively;
// an entry that cannot be read matches nothing.
bool host_allowed(const std::vector<std::string>& entries, const HttpsUrl& url);

}  // namespace portcullis::outbound
