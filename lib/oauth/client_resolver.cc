#include "oauth/client_resolver.h"

#include "cimd/resolve.h"
#include "clients/clients.h"
#include "core/ids.h"
#include "store/columns.h"
#include "tokens/consents.h"

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
                                                   const std::string& client_id,
                                                   const http::Request& request, int64_t now) {
  if (cimd::looks_like_cimd_client_id(client_id)) {
    PORTCULLIS_ASSIGN_OR_RETURN(ClientInfo client, resolve_client(services, client_id, now));
    return ResolvedClient{std::move(client), std::nullopt, false, std::nullopt};
  }
  if (!is_valid_id(client_id, "dcr_") && !is_valid_id(client_id, "cli_")) {
    return lookup_failed(Status::not_found("no client " + client_id));
  }
  // The client, its resource, and the live session the cookie names (with its user) and that
  // user's consent for the client and its resource: five primary-key lookups in one statement.
  // The tables are joined as tables, each store's column list qualified by its alias: MariaDB
  // plans this in less time than the same read with the client and the resource as derived
  // tables (bench/README.md, "Where a signed-in code flow's time goes"). Without a session
  // cookie the token's hash is NULL, which names no session.
  const std::optional<std::string> token_hash =
      identity::SessionStore(services.db, services.config).presented_token_hash(request);
  static const std::string kSql =
      "SELECT " + store::qualified_columns("cl", kClientColumns) + ", " +
      store::qualified_columns("r", kResourceColumns) + ", " + identity::kLiveSessionColumns +
      ", cs.scopes FROM oauth_clients cl LEFT JOIN resources r ON r.id = cl.resource_id "
      "LEFT JOIN (" +
      identity::kLiveSessionTables + ") ON " + identity::kLiveSessionCondition +
      " LEFT JOIN consents cs ON cs.user_id = s.user_id AND cs.client_key = ? AND "
      "cs.resource_id = cl.resource_id WHERE cl.id = ?";
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      services.db.query(kSql, {token_hash ? store::Value(*token_hash) : store::Value(nullptr), now,
                               ConsentStore::client_key(client_id), client_id}));
  if (rows.empty()) return lookup_failed(Status::not_found("no client " + client_id));
  const store::Row& row = rows[0];
  PORTCULLIS_ASSIGN_OR_RETURN(AuthenticatableClient client, client_from_row(row));
  ResolvedClient out{std::move(client.info), std::nullopt, true, std::nullopt};
  constexpr size_t kResourceAt = kClientColumnCount;
  constexpr size_t kSessionAt = kResourceAt + kResourceColumnCount;
  if (!row.is_null(kResourceAt)) {
    PORTCULLIS_ASSIGN_OR_RETURN(out.resource, resource_from_row(row, kResourceAt));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(out.session, identity::live_session(services.db, row, kSessionAt));
  if (out.session) {
    out.session->consented_scopes = row.opt(kSessionAt + identity::kLiveSessionColumnCount);
  }
  return out;
}

}  // namespace portcullis::oauth
