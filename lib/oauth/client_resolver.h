// One way to find a client by its client_id, whichever kind it is: a CIMD URL is resolved
// through its (cached) metadata document, anything else is looked up among registered clients.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "clients/client_info.h"
#include "clients/resources.h"
#include "core/status.h"
#include "http/request.h"
#include "identity/session_store.h"
#include "server/services.h"

namespace portcullis::oauth {

// NotFound (reason invalid_client) for an unknown registered client; for a CIMD client, the
// resolver's error (reason invalid_client) with a message fit for the user.
Result<ClientInfo> resolve_client(server::Services& services, const std::string& client_id,
                                  int64_t now);

// resolve_client, and for a registered client the resource it was registered for (nullopt when
// that no longer exists) and the browser session of `request` with its user's remembered
// consent for this client and resource (identity::SessionStore::current with a ConsentOf), all
// read in one round trip: the authorization endpoint's first. A CIMD client comes without
// either: its request names the resource, so the session is read once that is known
// (`session_read` false).
struct ResolvedClient {
  ClientInfo client;
  std::optional<Resource> resource;
  bool session_read = false;
  std::optional<identity::Session> session;  // when session_read: nullopt when signed out
};
Result<ResolvedClient> resolve_client_and_resource(server::Services& services,
                                                   const std::string& client_id,
                                                   const http::Request& request, int64_t now);

}  // namespace portcullis::oauth
