#include "clients/clients.h"

#include <unordered_map>

#include "core/ids.h"
#include "core/time.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "format/json.h"
#include "tokens/consents.h"
#include "tokens/grant_revocation.h"

namespace portcullis::oauth {
namespace {

constexpr int kTouchGranularitySeconds = 60;
constexpr size_t kMaxTouchMemory = 10000;  // clients remembered per worker before starting over
constexpr int64_t kPruneBatch = 500;       // rows per DELETE: short locks, however many are due

bool is_registered_id(const std::string& id) {
  return is_valid_id(id, "dcr_") || is_valid_id(id, "cli_");
}

const char* kind_name(ClientInfo::Kind kind) {
  return kind == ClientInfo::Kind::kDcr ? "dcr" : "preregistered";
}

Result<RegisteredClient> registered_from_row(const store::Row& r, size_t at) {
  RegisteredClient c;
  c.client_id = r.str(at);
  c.resource_id = r.str(at + 1);
  c.kind = r.str(at + 2) == "dcr" ? ClientInfo::Kind::kDcr : ClientInfo::Kind::kPreregistered;
  auto stored = json::parse(r.str(at + 3));
  if (!stored) return Status::internal("stored client metadata is corrupt");
  PORTCULLIS_ASSIGN_OR_RETURN(c.metadata, stored_client_metadata(*stored));
  c.client_id_issued_at = r.i64(at + 4);
  c.create_time = db_time_to_rfc3339(r.str(at + 5));
  if (!r.is_null(at + 6)) c.last_used_time = db_time_to_rfc3339(r.str(at + 6));
  return c;
}

Result<RegisteredClient> from_row(const store::Row& r) {
  return registered_from_row(r, 0);
}

Status no_client(const std::string& client_id) {
  return Status::not_found("no client " + client_id);
}

Status authentication_failed() {
  return Status::unauthenticated("client authentication failed").with_reason("invalid_client");
}

}  // namespace

Json::Value registration_response(const RegisteredClient& c) {
  Json::Value out = client_metadata_json(c.metadata);
  out["client_id"] = c.client_id;
  out["client_id_issued_at"] = static_cast<Json::Int64>(c.client_id_issued_at);
  if (!c.client_secret.empty()) {
    out["client_secret"] = c.client_secret;
    out["client_secret_expires_at"] = 0;
  }
  return out;
}

Json::Value registration_event_data(const RegisteredClient& c) {
  Json::Value data(Json::objectValue);
  data["registration"] = kind_name(c.kind);
  data["token_endpoint_auth_method"] = c.metadata.token_endpoint_auth_method;
  data["existing"] = c.existing;
  return data;
}

ClientInfo client_info(const RegisteredClient& c) {
  ClientInfo info;
  info.kind = c.kind;
  info.client_id = c.client_id;
  info.resource_id = c.resource_id;
  info.client_name = c.metadata.client_name;
  info.redirect_uris = c.metadata.redirect_uris;
  info.token_endpoint_auth_method = c.metadata.token_endpoint_auth_method;
  info.grant_types = c.metadata.grant_types;
  info.client_uri = c.metadata.client_uri;
  info.logo_uri = c.metadata.logo_uri;
  return info;
}

bool secret_matches(const AuthenticatableClient* client, const std::string& secret) {
  std::string presented = crypto::sha256(secret);
  return client && !client->secret_hash.empty() &&
         crypto::constant_time_equals(presented, client->secret_hash);
}

Result<AuthenticatableClient> client_from_row(const store::Row& row, size_t first) {
  PORTCULLIS_ASSIGN_OR_RETURN(RegisteredClient c, registered_from_row(row, first));
  return AuthenticatableClient{client_info(c), row.str(first + 7)};
}

Result<ClientInfo> ClientStore::get(const std::string& client_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(AuthenticatableClient c, find(client_id));
  return std::move(c.info);
}

Result<AuthenticatableClient> ClientStore::find(const std::string& client_id) {
  if (!is_registered_id(client_id)) return no_client(client_id);
  static const std::string kSql =
      std::string("SELECT ") + kClientColumns + " FROM oauth_clients WHERE id = ?";
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(kSql, {client_id}));
  if (rows.empty()) return no_client(client_id);
  return client_from_row(rows[0]);
}

Result<ClientWithCode> ClientStore::find_with_code_state(const std::string& client_id,
                                                         const SealedCode* code) {
  if (!is_registered_id(client_id)) return no_client(client_id);
  if (!code) {
    PORTCULLIS_ASSIGN_OR_RETURN(AuthenticatableClient client, find(client_id));
    return ClientWithCode{std::move(client), std::nullopt};
  }
  // The client as a derived table (one primary-key lookup), the code's grant, user and resource
  // LEFT JOINed to it by their own primary keys: one row when the client exists.
  static const std::string kSql = std::string("SELECT cl.*, ") + kCodeStateColumns +
                                  " FROM (SELECT " + kClientColumns +
                                  " FROM oauth_clients WHERE id = ?) cl " + kCodeStateJoins;
  store::Params params{client_id};
  for (auto& p : code_state_params(*code)) params.push_back(std::move(p));
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(kSql, params));
  if (rows.empty()) return no_client(client_id);
  PORTCULLIS_ASSIGN_OR_RETURN(AuthenticatableClient client, client_from_row(rows[0]));
  return ClientWithCode{std::move(client), code_state_from_row(rows[0], kClientColumnCount)};
}

Result<ClientInfo> ClientStore::authenticate(const std::string& client_id,
                                             const std::string& secret) {
  auto client = find(client_id);
  if (!client && client.status().code() != Code::kNotFound) return client.status();
  if (!secret_matches(client ? &*client : nullptr, secret)) return authentication_failed();
  return std::move(client->info);
}

Status ClientStore::touch(const std::string& client_id) {
  if (!is_registered_id(client_id)) return Status::ok();
  // This worker's last write per client. The database keeps the once-a-minute rule across
  // workers and nodes; this only spares the round trip of an UPDATE that would change nothing.
  static std::unordered_map<std::string, int64_t> last_touched;
  int64_t now = unix_now();
  auto it = last_touched.find(client_id);
  if (it != last_touched.end() && now - it->second < kTouchGranularitySeconds) {
    return Status::ok();
  }
  if (last_touched.size() >= kMaxTouchMemory) last_touched.clear();
  Status st =
      db_.execute(
             "UPDATE oauth_clients SET last_used_time = UTC_TIMESTAMP(6) WHERE id = ? AND "
             "(last_used_time IS NULL OR last_used_time < UTC_TIMESTAMP(6) - INTERVAL ? SECOND)",
             {client_id, static_cast<int64_t>(kTouchGranularitySeconds)})
          .status();
  if (st.is_ok()) last_touched[client_id] = now;
  return st;
}

Result<RegisteredClient> ClientStore::find_by_dedup_key(const std::string& resource_id,
                                                        const std::string& key) {
  static const std::string kSql = std::string("SELECT ") + kClientColumns +
                                  " FROM oauth_clients WHERE resource_id = ? AND dedup_key = ?";
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(kSql, {resource_id, key}));
  if (rows.empty()) return Status::not_found("no client with this metadata");
  PORTCULLIS_ASSIGN_OR_RETURN(RegisteredClient c, from_row(rows[0]));
  c.existing = true;
  (void)touch(c.client_id);  // about to be used; a failed touch only delays that knowledge
  return c;
}

Result<RegisteredClient> ClientStore::register_client(ClientInfo::Kind kind,
                                                      const std::string& resource_id,
                                                      const ClientMetadata& metadata) {
  if (kind == ClientInfo::Kind::kCimd) {
    return Status::internal("CIMD clients are not registered in the store");
  }
  const Json::Value echo = client_metadata_json(metadata);
  const std::string metadata_text = json::write(echo);
  // Public DCR clients only: a confidential client's registration is what hands it its
  // secret, so answering with someone else's existing client would be wrong.
  store::Value dedup_key = nullptr;
  if (kind == ClientInfo::Kind::kDcr && metadata.is_public()) {
    std::string key = crypto::sha256("dcr-public-metadata\n" + metadata_text);
    auto existing = find_by_dedup_key(resource_id, key);
    if (existing || existing.status().code() != Code::kNotFound) return existing;
    dedup_key = key;
  }
  RegisteredClient c;
  c.client_id = new_id(kind == ClientInfo::Kind::kDcr ? "dcr_" : "cli_");
  c.resource_id = resource_id;
  c.kind = kind;
  c.metadata = metadata;
  c.client_id_issued_at = unix_now();
  store::Value secret_hash = nullptr;
  if (!metadata.is_public()) {
    c.client_secret = crypto::random_token(32);
    secret_hash = crypto::sha256(c.client_secret);
  }
  std::string created = db_now();
  c.create_time = db_time_to_rfc3339(created);
  auto inserted = db_.execute(
      "INSERT INTO oauth_clients (id, resource_id, kind, client_name, redirect_uris, "
      "token_endpoint_auth_method, grant_types, metadata, secret_hash, dedup_key, "
      "client_id_issued_at, create_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {c.client_id, resource_id, std::string(kind_name(kind)),
       store::nullable(metadata.client_name.empty() ? std::nullopt
                                                    : std::optional(metadata.client_name)),
       json::write(echo["redirect_uris"]), metadata.token_endpoint_auth_method,
       json::write(echo["grant_types"]), metadata_text, secret_hash, dedup_key,
       c.client_id_issued_at, created});
  if (!inserted) {
    // Two identical public registrations raced; the other one's row is the answer.
    if (inserted.status().code() == Code::kAlreadyExists &&
        std::holds_alternative<std::string>(dedup_key)) {
      return find_by_dedup_key(resource_id, std::get<std::string>(dedup_key));
    }
    return inserted.status();
  }
  return c;
}

Result<RegisteredClient> ClientStore::register_from_request(ClientInfo::Kind kind,
                                                            const Resource& resource,
                                                            const Json::Value& request) {
  PORTCULLIS_ASSIGN_OR_RETURN(ClientMetadata metadata, parse_client_metadata(request, resource));
  return register_client(kind, resource.id, metadata);
}

paging::Listing ClientStore::listing(const std::string& resource_id) {
  return paging::Listing{"resource_clients", "resource_id=" + resource_id};
}

Result<paging::Page<RegisteredClient>> ClientStore::list(const std::string& resource_id,
                                                         const paging::PageRequest& request,
                                                         const paging::TokenCodec& codec) {
  return paging::fetch_page_as<RegisteredClient>(db_,
                                                 paging::KeysetQuery{.columns = kClientColumns,
                                                                     .from = "oauth_clients",
                                                                     .where = "resource_id = ?",
                                                                     .params = {resource_id}},
                                                 request, codec, from_row);
}

Status ClientStore::remove(const std::string& resource_id, const std::string& client_id) {
  if (!is_registered_id(client_id)) return no_client(client_id);
  int64_t now = unix_now();
  return db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows rows,
        db_.query("SELECT id FROM oauth_clients WHERE id = ? AND resource_id = ? FOR UPDATE",
                  {client_id, resource_id}));
    if (rows.empty()) return no_client(client_id);
    PORTCULLIS_RETURN_IF_ERROR(
        revoke_all_grants(db_, GrantsOf::kClient, client_id, "client_deleted", now));
    PORTCULLIS_RETURN_IF_ERROR(ConsentStore(db_).remove_all_of_client(client_id));
    return db_.execute("DELETE FROM oauth_clients WHERE id = ?", {client_id}).status();
  });
}

Status ClientStore::remove_all_of_resource(const std::string& resource_id) {
  return db_.execute("DELETE FROM oauth_clients WHERE resource_id = ?", {resource_id}).status();
}

Result<uint64_t> ClientStore::prune(int64_t now, int64_t retention_seconds,
                                    const std::string& resource_id) {
  int64_t cutoff = now - retention_seconds;
  std::string sql =
      "DELETE FROM oauth_clients WHERE kind = 'dcr' "
      "AND (last_used_time < FROM_UNIXTIME(?) "
      "     OR (last_used_time IS NULL AND create_time < FROM_UNIXTIME(?))) "
      "AND NOT EXISTS (SELECT 1 FROM grants g WHERE g.client_id = oauth_clients.id "
      "                AND g.revoked_at IS NULL AND g.absolute_expires_at > ?)";
  store::Params params = {cutoff, cutoff, now};
  if (!resource_id.empty()) {
    sql += " AND resource_id = ?";
    params.emplace_back(resource_id);
  }
  sql += " LIMIT ?";
  params.emplace_back(kPruneBatch);
  uint64_t total = 0;
  for (;;) {
    PORTCULLIS_ASSIGN_OR_RETURN(uint64_t n, db_.execute(sql, params));
    total += n;
    if (n < static_cast<uint64_t>(kPruneBatch)) return total;
  }
}

}  // namespace portcullis::oauth
