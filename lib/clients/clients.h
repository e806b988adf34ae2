// Clients registered for one resource (contract §2): by dynamic registration (`dcr_…`) or
// through the management API (`cli_…`, pre-registered). Both live in oauth_clients and share
// one set of metadata rules (client_metadata.h). CIMD clients are not stored here.
//
// Secrets are 256-bit random values (URL-safe, shown once); only their SHA-256 is stored, and a
// presented secret is compared in constant time.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "clients/client_info.h"
#include "clients/client_metadata.h"
#include "clients/resources.h"
#include "core/status.h"
#include "paging/keyset.h"
#include "store/db.h"
#include "tokens/codes.h"

namespace portcullis::oauth {

struct RegisteredClient {
  std::string client_id;  // dcr_… or cli_…
  std::string resource_id;
  ClientInfo::Kind kind = ClientInfo::Kind::kDcr;
  ClientMetadata metadata;
  int64_t client_id_issued_at = 0;
  std::string create_time;     // RFC 3339
  std::string last_used_time;  // RFC 3339; empty: never used
  // Set only in the answer to the registration that created the client, never stored.
  std::string client_secret;
  // A DCR registration answered with an existing public client of identical metadata.
  bool existing = false;
};

// The RFC 7591 §3.2.1 response: client_id, client_id_issued_at, client_secret and
// client_secret_expires_at (0: it does not expire) when a secret was just issued, and every
// registered field with its effective value. Never a null.
Json::Value registration_response(const RegisteredClient& client);

// The `data` of a client.registered event: how the client came (registration: dcr |
// preregistered), its token_endpoint_auth_method, and whether DCR returned an existing one.
Json::Value registration_event_data(const RegisteredClient& client);

// The view the authorization and token endpoints use.
ClientInfo client_info(const RegisteredClient& client);

// A client as client authentication needs it: its view and, for a confidential client, the
// SHA-256 of its secret (empty for public and CIMD clients).
struct AuthenticatableClient {
  ClientInfo info;
  std::string secret_hash;
};

// Whether `secret` is the client's: SHA-256 compared in constant time, and the hash computed
// even when there is nothing to compare with, so every failure costs the same.
bool secret_matches(const AuthenticatableClient* client, const std::string& secret);

// The columns of `oauth_clients` a client is read from, in order, and the reader of a row that
// holds them from column `first` on: for a read joining a client to another store's rows
// (oauth/client_resolver.h reads the signed-in browser's session with it).
inline constexpr const char* kClientColumns =
    "id, resource_id, kind, metadata, client_id_issued_at, create_time, last_used_time, "
    "secret_hash";
inline constexpr size_t kClientColumnCount = 8;
Result<AuthenticatableClient> client_from_row(const store::Row& row, size_t first = 0);

// A registered client and what its code exchange reads about the presented code
// (ClientStore::find_with_code_state).
struct ClientWithCode {
  AuthenticatableClient client;
  std::optional<CodeState> code;  // nullopt: no code was given to read
};

class ClientStore {
 public:
  explicit ClientStore(store::Db& db) : db_(db) {}

  // A dcr_… or cli_… client; NotFound for any other id, including CIMD URLs.
  Result<ClientInfo> get(const std::string& client_id);
  // The same with the secret's hash.
  Result<AuthenticatableClient> find(const std::string& client_id);
  // The client and, in the same round trip, what the opened sealed code `code` names
  // (tokens/codes.h, CodeState), whoever it was issued to: the read of a code exchange that its
  // one statement did not decide (oauth/token_grants.h; the client must be authenticated before
  // the code is looked at, and an unknown code must still be told from an unknown client).
  // Without a code, the client alone. NotFound like find().
  Result<ClientWithCode> find_with_code_state(const std::string& client_id, const SealedCode* code);
  // The client, when `secret` is its secret. Unauthenticated with reason invalid_client on any
  // failure — unknown client, public client, wrong secret — and the same work in each case.
  Result<ClientInfo> authenticate(const std::string& client_id, const std::string& secret);
  // Records that the client was used (for pruning). Writes at most once a minute per client
  // and worker process (remembered in memory), so calling it on every token request costs
  // nothing most of the time.
  Status touch(const std::string& client_id);

  // Registers a client of `kind` (kDcr or kPreregistered) for the resource. A confidential
  // client gets a new secret. A public DCR client whose metadata equals an existing public DCR
  // client's of the same resource gets that client back (existing = true, touched) instead of
  // a new row: clients that register on every start do not fill the table.
  Result<RegisteredClient> register_client(ClientInfo::Kind kind, const std::string& resource_id,
                                           const ClientMetadata& metadata);
  // The same for an RFC 7591 request body, read with parse_client_metadata (whose errors it
  // returns): what the DCR endpoint and the management API both do.
  Result<RegisteredClient> register_from_request(ClientInfo::Kind kind, const Resource& resource,
                                                 const Json::Value& request);
  // The resource's clients (both kinds), oldest first, paged with listing(resource_id).
  Result<paging::Page<RegisteredClient>> list(const std::string& resource_id,
                                              const paging::PageRequest& request,
                                              const paging::TokenCodec& codec);
  static paging::Listing listing(const std::string& resource_id);
  // Deletes a client of the resource, its consents, and revokes its grants and tokens.
  // NotFound when the resource has no such client.
  Status remove(const std::string& resource_id, const std::string& client_id);
  // Every client of a deleted resource (ResourceStore::remove, inside its transaction; the
  // resource's grants and consents are gone by then).
  Status remove_all_of_resource(const std::string& resource_id);
  // Deletes DCR clients not used for `retention_seconds` before `now` (never used: counted
  // from their creation) that no live grant names (revoked_at IS NULL and absolute_expires_at
  // > now). Pre-registered clients are never pruned. `resource_id` non-empty limits it to one
  // resource. Returns how many were deleted.
  Result<uint64_t> prune(int64_t now, int64_t retention_seconds,
                         const std::string& resource_id = "");

 private:
  Result<RegisteredClient> find_by_dedup_key(const std::string& resource_id,
                                             const std::string& key);

  store::Db& db_;
};

}  // namespace portcullis::oauth
