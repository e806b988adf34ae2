// One way to find a client by its client_id, whichever kind it is: a CIMD URL is resolved
// through its (cached) metadata document, anything else is looked up among registered clients.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "clients/client_info.h"
#include "clients/resources.h"
#include "core/status.h"
#include "server/services.h"

namespace portcullis::oauth {

// NotFound (reason invalid_client) for an unknown registered client; for a CIMD client, the
// resolver's error (reason invalid_client) with a message fit for the user.
Result<ClientInfo> resolve_client(server::Services& services, const std::string& client_id,
                                  int64_t now);

// resolve_client, and for a registered client the resource it was registered for (nullopt when
// that no longer exists), read with it in one round trip (the authorization endpoint's first).
// A CIMD client comes without one: its request names the resource.
struct ResolvedClient {
  ClientInfo client;
  std::optional<Resource> resource;
};
Result<ResolvedClient> resolve_client_and_resource(server::Services& services,
                                                   const std::string& client_id, int64_t now);

}  // namespace portcullis::oauth
