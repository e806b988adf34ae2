#include "oauth/client_resolver.h"

#include "cimd/resolve.h"
#include "clients/clients.h"

namespace portcullis::oauth {
namespace {

// A registered client's lookup failed: NotFound says the id is unknown.
Status lookup_failed(const Status& st) {
  if (st.code() == Code::kNotFound) {
    return Status::not_found("unknown client_id").with_reason("invalid_client");
  }
  return st;
}

}  // namespace

Result<ClientInfo> resolve_client(server::Services& services, const std::string& client_id,
                                  int64_t now) {
  if (cimd::looks_like_cimd_client_id(client_id)) {
    return cimd::resolve_client(services.db, services.config, client_id, now);
  }
  auto client = ClientStore(services.db).get(client_id);
  if (!client) return lookup_failed(client.status());
  return client;
}

Result<ResolvedClient> resolve_client_and_resource(server::Services& services,
                                                   const std::string& client_id, int64_t now) {
  if (cimd::looks_like_cimd_client_id(client_id)) {
    PORTCULLIS_ASSIGN_OR_RETURN(ClientInfo client, resolve_client(services, client_id, now));
    return ResolvedClient{std::move(client), std::nullopt};
  }
  auto found = ClientStore(services.db).get_with_resource(client_id);
  if (!found) return lookup_failed(found.status());
  return ResolvedClient{std::move(found->first), std::move(found->second)};
}

}  // namespace portcullis::oauth
