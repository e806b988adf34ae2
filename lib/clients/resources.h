// Resources: the MCP servers Portcullis issues tokens for (contract §7). Each has its own
// issuer, `{base_url}/resources/{id}`, and its server URL is the audience of its tokens and the
// only value an RFC 8707 `resource` parameter may name for it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "jose/jws_key.h"
#include "paging/keyset.h"
#include "store/db.h"

namespace portcullis::oauth {

inline constexpr int kMinAccessTokenTtlSeconds = 60;
inline constexpr int kMaxAccessTokenTtlSeconds = 86400;
inline constexpr int kDefaultAccessTokenTtlSeconds = 900;
// Lifetimes outside this range work, but the resource's representation carries a warning:
// shorter means a refresh every few minutes, longer a stolen token that stays useful for hours.
inline constexpr int kRecommendedMinTtlSeconds = 300;
inline constexpr int kRecommendedMaxTtlSeconds = 3600;

inline constexpr size_t kMaxResourceNameChars = 200;
inline constexpr size_t kMaxServerUrlBytes = 2048;
inline constexpr size_t kMaxScopes = 100;
inline constexpr size_t kMaxScopeNameBytes = 128;
inline constexpr size_t kMaxScopeDescriptionChars = 500;
// Every scope at once must fit a grant's or a code's scope column (and a token's claim).
inline constexpr size_t kMaxJoinedScopeBytes = 2000;

struct ScopeDef {
  std::string name;
  std::string description;
};

struct Resource {
  std::string id;          // res_…
  std::string name;        // shown on the consent page
  std::string server_url;  // the audience, exactly as registered
  bool dcr_enabled = true;
  bool cimd_enabled = true;
  int access_token_ttl_seconds = kDefaultAccessTokenTtlSeconds;
  // The JWS algorithm of the resource's access tokens: RS256 (default), ES256 or EdDSA.
  jose::JwsAlg access_token_signing_alg = jose::JwsAlg::kRS256;
  std::vector<ScopeDef> scopes;
  std::string create_time;  // RFC 3339
  std::string update_time;  // RFC 3339

  // `{base_url}/resources/{id}`, byte for byte what discovery publishes and tokens carry.
  std::string issuer(const config::Config& config) const;
  const ScopeDef* find_scope(std::string_view name) const;
};

// The writable fields of a resource; nullopt leaves a field as it is (PATCH) or at its
// default (create, where name and server_url are required).
struct ResourceFields {
  std::optional<std::string> name;
  std::optional<std::string> server_url;
  std::optional<bool> dcr_enabled;
  std::optional<bool> cimd_enabled;
  std::optional<int> access_token_ttl_seconds;
  std::optional<jose::JwsAlg> access_token_signing_alg;
  std::optional<std::vector<ScopeDef>> scopes;
};

// Human-readable notes about a valid but questionable setting (the lifetime outside
// kRecommended*); empty when there is nothing to say.
std::vector<std::string> resource_warnings(const Resource& resource);

// The access_token_signing_alg a request names: "RS256", "ES256" or "EdDSA", byte-exact.
// InvalidArgument naming the three for anything else.
Result<jose::JwsAlg> parse_access_token_signing_alg(std::string_view name);

// May `url` be a resource's server URL? An absolute https URL (http only for localhost,
// 127.0.0.1 and [::1], for local development), with a host, no userinfo, query or fragment,
// at most kMaxServerUrlBytes. InvalidArgument saying why not.
Status validate_server_url(std::string_view url);

// The form two server URLs are compared in: scheme and host lower-cased, one trailing slash
// removed (so "https://MCP.example.com/mcp/" and "https://mcp.example.com/mcp" are one
// resource). nullopt when `url` is not an absolute URL with a host and without a fragment.
// Its SHA-256 is the key of the unique index that keeps two resources from sharing a URL.
std::optional<std::string> canonical_server_url(std::string_view url);

// RFC 8707: does the `resource` parameter of a request name this resource? Compared in the
// canonical form above; a fragment, a relative URL or anything unparseable never matches.
bool resource_indicator_matches(const Resource& resource, std::string_view requested);

// Is `name` a scope token Portcullis accepts for a resource (RFC 6749 §3.3, narrowed): 1 to
// kMaxScopeNameBytes of letters, digits and `_ - . : /`, starting with a letter or digit.
bool is_valid_scope_name(std::string_view name);

// The columns of `resources` a Resource is read from, in order, and the reader of a row that
// holds them from column `first` on: for a joined read (oauth::resolve_client_and_resource reads
// a client with its resource as `SELECT …, <kResourceColumns qualified by r> … LEFT JOIN
// resources r …`, store::qualified_columns).
inline constexpr const char* kResourceColumns =
    "id, name, server_url, dcr_enabled, cimd_enabled, access_token_ttl_seconds, scopes, "
    "create_time, update_time, access_token_signing_alg";
inline constexpr size_t kResourceColumnCount = 10;
Result<Resource> resource_from_row(const store::Row& row, size_t first = 0);

class ResourceStore {
 public:
  // `max_ttl_seconds`: the longest access-token lifetime allowed (config's
  // max_token_lifetime_seconds: a retired signing key stays published only that long).
  explicit ResourceStore(store::Db& db, int64_t max_ttl_seconds = kMaxAccessTokenTtlSeconds)
      : db_(db), max_ttl_seconds_(max_ttl_seconds) {}

  // NotFound for an unknown (or malformed) id.
  Result<Resource> get(const std::string& id);
  // The resource whose server URL a `resource` indicator names (canonical comparison).
  Result<Resource> find_by_server_url(std::string_view url);
  // REQUIRES name and server_url. InvalidArgument for a bad field, AlreadyExists when another
  // resource has the same server URL (canonical form).
  Result<Resource> create(const ResourceFields& fields);
  // Applies the given fields, then validates the whole resource as create does.
  Result<Resource> update(const std::string& id, const ResourceFields& changes);
  // Deletes the resource with its clients and consents, and revokes its grants (and with
  // them the refresh tokens and the access tokens on the deny-list).
  Status remove(const std::string& id);
  // Oldest first, paged (paging/keyset.h).
  Result<paging::Page<Resource>> list(const paging::PageRequest& request,
                                      const paging::TokenCodec& codec);

  // The listing page tokens of list() are bound to.
  static paging::Listing listing();

 private:
  Status validate(const Resource& resource) const;

  store::Db& db_;
  int64_t max_ttl_seconds_;
};

}  // namespace portcullis::oauth
