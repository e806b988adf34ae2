#include "oauth/client_resolver.h"

#include "cimd/resolve.h"
#include "clients/clients.h"

namespace portcullis::oauth {

Result<ClientInfo> resolve_client(server::Services& services, const std::string& client_id,
                                  int64_t now) {
  if (cimd::looks_like_cimd_client_id(client_id)) {
    return cimd::resolve_client(services.db, services.config, client_id, now);
  }
  ClientStore clients(services.db);
  auto client = clients.get(client_id);
  if (!client && client.status().code() == Code::kNotFound) {
    return Status::not_found("unknown client_id").with_reason("invalid_client");
  }
  return client;
}

}  // namespace portcullis::oauth
