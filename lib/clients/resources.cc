#include "clients/resources.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "clients/clients.h"
#include "clients/uri.h"
#include "core/ids.h"
#include "core/time.h"
#include "crypto/hash.h"
#include "format/json.h"
#include "format/text.h"
#include "store/update_row.h"
#include "tokens/consents.h"
#include "tokens/grant_revocation.h"
#include "tokens/grants.h"

namespace portcullis::oauth {
namespace {

constexpr const char* kColumns = kResourceColumns;  // clients/resources.h

Status invalid(std::string message) {
  return Status::invalid_argument(std::move(message));
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_valid_host(std::string_view host) {
  if (host.empty()) return false;
  if (host.front() == '[') {
    return host.size() > 2 && host.back() == ']' &&
           std::all_of(host.begin() + 1, host.end() - 1, [](char c) {
             return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
           });
  }
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

Json::Value scopes_to_json(const std::vector<ScopeDef>& scopes) {
  Json::Value a(Json::arrayValue);
  for (const auto& s : scopes) {
    Json::Value o(Json::objectValue);
    o["name"] = s.name;
    o["description"] = s.description;
    a.append(o);
  }
  return a;
}

Result<std::vector<ScopeDef>> scopes_from_json(const std::string& text) {
  auto parsed = json::parse(text);
  if (!parsed || !parsed->isArray()) return Status::internal("a stored scope list is corrupt");
  std::vector<ScopeDef> out;
  for (const auto& s : *parsed) {
    if (!s.isObject() || !s["name"].isString() || !s["description"].isString()) {
      return Status::internal("a stored scope list is corrupt");
    }
    out.push_back(ScopeDef{s["name"].asString(), s["description"].asString()});
  }
  return out;
}

Result<Resource> from_row(const store::Row& r) {
  return resource_from_row(r);
}

void apply(Resource& r, const ResourceFields& f) {
  if (f.name) r.name = *f.name;
  if (f.server_url) r.server_url = *f.server_url;
  if (f.dcr_enabled) r.dcr_enabled = *f.dcr_enabled;
  if (f.cimd_enabled) r.cimd_enabled = *f.cimd_enabled;
  if (f.access_token_ttl_seconds) r.access_token_ttl_seconds = *f.access_token_ttl_seconds;
  if (f.access_token_signing_alg) r.access_token_signing_alg = *f.access_token_signing_alg;
  if (f.scopes) r.scopes = *f.scopes;
}

std::string server_url_key(const std::string& server_url) {
  return crypto::sha256(canonical_server_url(server_url).value_or(server_url));
}

Status duplicate_url(const Status& st) {
  if (st.code() != Code::kAlreadyExists) return st;
  return Status::already_exists("another resource already has this server_url");
}

}  // namespace

Result<Resource> resource_from_row(const store::Row& r, size_t first) {
  Resource out;
  out.id = r.str(first);
  out.name = r.str(first + 1);
  out.server_url = r.str(first + 2);
  out.dcr_enabled = r.boolean(first + 3);
  out.cimd_enabled = r.boolean(first + 4);
  out.access_token_ttl_seconds = static_cast<int>(r.i64(first + 5));
  PORTCULLIS_ASSIGN_OR_RETURN(out.scopes, scopes_from_json(r.str(first + 6)));
  out.create_time = db_time_to_rfc3339(r.str(first + 7));
  out.update_time = db_time_to_rfc3339(r.str(first + 8));
  // The column only holds names alg_from_name knows (written below from a JwsAlg).
  out.access_token_signing_alg = signing_alg_column(r.str(first + 9));
  return out;
}

std::string Resource::issuer(const config::Config& config) const {
  return config.base_url + "/resources/" + id;
}

const ScopeDef* Resource::find_scope(std::string_view scope_name) const {
  for (const auto& s : scopes) {
    if (s.name == scope_name) return &s;
  }
  return nullptr;
}

Result<jose::JwsAlg> parse_access_token_signing_alg(std::string_view name) {
  if (auto alg = jose::alg_from_name(name)) return *alg;
  return invalid("access_token_signing_alg must be one of RS256, ES256, EdDSA");
}

std::vector<std::string> resource_warnings(const Resource& r) {
  std::vector<std::string> out;
  if (r.access_token_ttl_seconds < kRecommendedMinTtlSeconds) {
    out.push_back("access_token_ttl_seconds " + std::to_string(r.access_token_ttl_seconds) +
                  " is below the recommended minimum of " +
                  std::to_string(kRecommendedMinTtlSeconds) +
                  ": clients will refresh their tokens very often");
  } else if (r.access_token_ttl_seconds > kRecommendedMaxTtlSeconds) {
    out.push_back("access_token_ttl_seconds " + std::to_string(r.access_token_ttl_seconds) +
                  " is above the recommended maximum of " +
                  std::to_string(kRecommendedMaxTtlSeconds) +
                  ": a leaked access token stays usable that long");
  }
  return out;
}

std::optional<std::string> canonical_server_url(std::string_view url) {
  if (!text::is_printable_ascii(url) || url.find('#') != std::string_view::npos)
    return std::nullopt;
  auto p = parse_uri(url);
  if (!p || !p->has_authority || p->has_userinfo || !is_valid_host(p->host)) return std::nullopt;
  std::string_view rest = p->rest;
  size_t q = rest.find('?');
  std::string_view path = rest.substr(0, q);
  std::string_view query = q == std::string_view::npos ? "" : rest.substr(q);
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  std::string out = lower(p->scheme) + "://" + lower(p->host);
  if (!p->port.empty()) out += ":" + p->port;
  out += path;
  out += query;
  return out;
}

Status validate_server_url(std::string_view url) {
  if (url.empty()) return invalid("server_url is required");
  if (url.size() > kMaxServerUrlBytes) {
    return invalid("server_url is longer than " + std::to_string(kMaxServerUrlBytes) + " bytes");
  }
  if (!text::is_printable_ascii(url)) {
    return invalid(
        "server_url must not contain spaces, control or non-ASCII characters or backslashes");
  }
  if (url.find('#') != std::string_view::npos) {
    return invalid("server_url must not have a fragment (RFC 8707)");
  }
  auto p = parse_uri(url);
  if (!p || !p->has_authority || p->host.empty()) {
    return invalid("server_url must be an absolute URL with a host");
  }
  if (p->has_userinfo) return invalid("server_url must not contain userinfo");
  if (!is_valid_host(p->host)) return invalid("server_url has an invalid host");
  std::string scheme = lower(p->scheme);
  if (scheme != "https" && !(scheme == "http" && is_loopback_host(lower(p->host)))) {
    return invalid("server_url must be an https URL (http only for localhost, 127.0.0.1, [::1])");
  }
  if (p->rest.find('?') != std::string::npos) return invalid("server_url must not have a query");
  return Status::ok();
}

bool resource_indicator_matches(const Resource& resource, std::string_view requested) {
  auto want = canonical_server_url(requested);
  auto have = canonical_server_url(resource.server_url);
  return want && have && *want == *have;
}

bool is_valid_scope_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxScopeNameBytes) return false;
  if (!std::isalnum(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == ':' || c == '/';
  });
}

paging::Listing ResourceStore::listing() {
  return paging::Listing{"resources", ""};
}

Status ResourceStore::validate(const Resource& r) const {
  PORTCULLIS_RETURN_IF_ERROR(text::check_display_text(r.name, "name", kMaxResourceNameChars, true));
  PORTCULLIS_RETURN_IF_ERROR(validate_server_url(r.server_url));
  int64_t max_ttl = std::min<int64_t>(kMaxAccessTokenTtlSeconds, max_ttl_seconds_);
  if (r.access_token_ttl_seconds < kMinAccessTokenTtlSeconds ||
      r.access_token_ttl_seconds > max_ttl) {
    return invalid("access_token_ttl_seconds must be from " +
                   std::to_string(kMinAccessTokenTtlSeconds) + " to " + std::to_string(max_ttl));
  }
  if (r.scopes.size() > kMaxScopes) {
    return invalid("a resource has at most " + std::to_string(kMaxScopes) + " scopes");
  }
  std::set<std::string> seen;
  size_t joined = 0;
  for (const auto& s : r.scopes) {
    if (!is_valid_scope_name(s.name)) {
      return invalid("scope name \"" + s.name.substr(0, kMaxScopeNameBytes) +
                     "\" is not valid: 1 to " + std::to_string(kMaxScopeNameBytes) +
                     " letters, digits and _ - . : / starting with a letter or digit");
    }
    if (!seen.insert(s.name).second) return invalid("scope " + s.name + " is listed twice");
    PORTCULLIS_RETURN_IF_ERROR(text::check_display_text(s.description, "scope description",
                                                        kMaxScopeDescriptionChars, false));
    joined += s.name.size() + (joined ? 1 : 0);
  }
  if (joined > kMaxJoinedScopeBytes) {
    return invalid("the scope names together are longer than " +
                   std::to_string(kMaxJoinedScopeBytes) + " bytes");
  }
  return Status::ok();
}

Result<Resource> ResourceStore::find_by_server_url(std::string_view url) {
  // The same canonical form the unique index is built on, so "HTTPS://Host/mcp/" finds
  // "https://host/mcp" (RFC 8707 resource indicators, contract §3).
  auto canonical = canonical_server_url(url);
  if (!canonical) return Status::not_found("no resource has this server URL");
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kColumns + " FROM resources WHERE server_url_key = ?",
                {crypto::sha256(*canonical)}));
  if (rows.empty()) return Status::not_found("no resource has this server URL");
  return from_row(rows[0]);
}

Result<Resource> ResourceStore::get(const std::string& id) {
  if (!is_valid_id(id, "res_")) return Status::not_found("no resource " + id);
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kColumns + " FROM resources WHERE id = ?", {id}));
  if (rows.empty()) return Status::not_found("no resource " + id);
  return from_row(rows[0]);
}

Result<Resource> ResourceStore::create(const ResourceFields& fields) {
  if (!fields.name) return invalid("name is required");
  if (!fields.server_url) return invalid("server_url is required");
  Resource r;
  apply(r, fields);
  PORTCULLIS_RETURN_IF_ERROR(validate(r));
  r.id = new_id("res_");
  // The row is not read back: a 201 must mean exactly "this row was committed".
  std::string now = db_now();
  r.create_time = r.update_time = db_time_to_rfc3339(now);
  auto inserted = db_.execute(
      "INSERT INTO resources (id, name, server_url, server_url_key, dcr_enabled, cimd_enabled, "
      "access_token_ttl_seconds, access_token_signing_alg, scopes, create_time, update_time) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {r.id, r.name, r.server_url, server_url_key(r.server_url), r.dcr_enabled, r.cimd_enabled,
       static_cast<int64_t>(r.access_token_ttl_seconds),
       std::string(jose::alg_name(r.access_token_signing_alg)),
       json::write(scopes_to_json(r.scopes)), now, now});
  if (!inserted) return duplicate_url(inserted.status());
  return r;
}

Result<Resource> ResourceStore::update(const std::string& id, const ResourceFields& changes) {
  if (!is_valid_id(id, "res_")) return Status::not_found("no resource " + id);
  auto updated = store::update_row<Resource>(
      db_, std::string("SELECT ") + kColumns + " FROM resources", id, "no resource " + id, from_row,
      [&](Resource& r) -> Status {
        apply(r, changes);
        PORTCULLIS_RETURN_IF_ERROR(validate(r));
        std::string now = db_now();
        r.update_time = db_time_to_rfc3339(now);
        return db_
            .execute(
                "UPDATE resources SET name = ?, server_url = ?, server_url_key = ?, "
                "dcr_enabled = ?, cimd_enabled = ?, access_token_ttl_seconds = ?, "
                "access_token_signing_alg = ?, scopes = ?, update_time = ? WHERE id = ?",
                {r.name, r.server_url, server_url_key(r.server_url), r.dcr_enabled, r.cimd_enabled,
                 static_cast<int64_t>(r.access_token_ttl_seconds),
                 std::string(jose::alg_name(r.access_token_signing_alg)),
                 json::write(scopes_to_json(r.scopes)), now, id})
            .status();
      });
  if (!updated) return duplicate_url(updated.status());
  return updated;
}

Status ResourceStore::remove(const std::string& id) {
  if (!is_valid_id(id, "res_")) return Status::not_found("no resource " + id);
  int64_t now = unix_now();
  return db_.transaction([&]() -> Status {
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows rows, db_.query("SELECT id FROM resources WHERE id = ? FOR UPDATE", {id}));
    if (rows.empty()) return Status::not_found("no resource " + id);
    PORTCULLIS_RETURN_IF_ERROR(
        revoke_all_grants(db_, GrantsOf::kResource, id, "resource_deleted", now));
    PORTCULLIS_RETURN_IF_ERROR(ConsentStore(db_).remove_all_of_resource(id));
    PORTCULLIS_RETURN_IF_ERROR(ClientStore(db_).remove_all_of_resource(id));
    return db_.execute("DELETE FROM resources WHERE id = ?", {id}).status();
  });
}

Result<paging::Page<Resource>> ResourceStore::list(const paging::PageRequest& request,
                                                   const paging::TokenCodec& codec) {
  return paging::fetch_page_as<Resource>(
      db_, paging::KeysetQuery{.columns = kColumns, .from = "resources"}, request, codec, from_row);
}

}  // namespace portcullis::oauth
