#include "sso/connection_store.h"

#include "core/ids.h"
#include "core/time.h"
#include "format/json.h"
#include "sso/stored_connection.h"

namespace portcullis::sso {
namespace {

const std::string kColumns =
    std::string("id, organization_id, type, name, state, ") + kStoredColumns + ", sp_certificates";
constexpr size_t kCertificatesColumn = 9;

Result<Connection> from_row(const store::Row& r) {
  PORTCULLIS_ASSIGN_OR_RETURN(StoredColumns stored, read_stored_columns(r, 5));
  Connection c;
  c.id = r.str(0);
  c.organization_id = r.str(1);
  c.type = r.str(2);
  c.name = r.str(3);
  c.state = r.str(4);
  apply_stored_columns(std::move(stored), c);
  if (!r.is_null(kCertificatesColumn)) {
    auto certs = json::parse(r.str(kCertificatesColumn));
    if (certs && certs->isObject()) {
      c.sp_certificates.signing = (*certs)["signing"].asString();
      c.sp_certificates.encryption = (*certs)["encryption"].asString();
    }
  }
  return c;
}

// The associated data of the sealed SP private keys: bound to the connection.
std::string keys_aad(const std::string& connection_id) {
  return "sso_connection:" + connection_id + ":sp_keys";
}

// The sealed `column` (a constant of this file) of connection `id`, opened with `aad`;
// FailedPrecondition `missing` when none is stored.
Result<std::string> open_sealed(store::Db& db, const crypto::MasterKey& master_key,
                                const char* column, const std::string& id, const std::string& aad,
                                const char* missing) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db.query(std::string("SELECT ") + column + " FROM sso_connections WHERE id = ? AND " +
                   column + " IS NOT NULL",
               {id}));
  if (rows.empty()) return Status::failed_precondition(missing);
  return master_key.open(rows[0].str(0), aad);
}

std::string certificates_json(const SpCertificates& certs) {
  Json::Value v(Json::objectValue);
  v["signing"] = certs.signing;
  v["encryption"] = certs.encryption;
  return json::write(v);
}

Status not_found() {
  return Status::not_found("the organization has no such connection");
}

}  // namespace

paging::Listing ConnectionStore::listing(const std::string& organization_id) {
  return paging::Listing{"sso_connections", organization_id};
}

Status ConnectionStore::create(Connection& c, const std::optional<std::string>& client_secret) {
  c.id = new_id("conn_");
  store::Value sealed(nullptr);
  if (client_secret) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        std::string s, master_key_.seal(*client_secret, secret_aad("sso_connection", c.id)));
    sealed = std::move(s);
    c.has_client_secret = true;
  }
  store::Value certificates(nullptr);
  store::Value sealed_keys(nullptr);
  if (c.type == "saml") {
    PORTCULLIS_ASSIGN_OR_RETURN(SpKeys keys, generate_sp_keys(c.id, unix_now()));
    PORTCULLIS_ASSIGN_OR_RETURN(std::string s,
                                master_key_.seal(private_keys_json(keys), keys_aad(c.id)));
    sealed_keys = std::move(s);
    certificates = certificates_json(keys.certificates);
    c.sp_certificates = std::move(keys.certificates);
  }
  std::string now = db_now();
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("INSERT INTO sso_connections (id, organization_id, type, name, state, config, "
                  "secret_sealed, sp_certificates, sp_keys_sealed, create_time, update_time) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  {c.id, c.organization_id, c.type, c.name, c.state, json::write(config_json(c)),
                   sealed, certificates, sealed_keys, now, now})
          .status());
  c.create_time = db_time_to_rfc3339(now);
  c.update_time = c.create_time;
  return Status::ok();
}

Result<Connection> ConnectionStore::get(const std::string& organization_id, const std::string& id) {
  PORTCULLIS_ASSIGN_OR_RETURN(Connection c, find(id));
  if (c.organization_id != organization_id) return not_found();
  return c;
}

Result<Connection> ConnectionStore::find(const std::string& id) {
  if (!is_valid_id(id, "conn_")) return not_found();
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kColumns + " FROM sso_connections WHERE id = ?", {id}));
  if (rows.empty()) return not_found();
  return from_row(rows[0]);
}

Result<paging::Page<Connection>> ConnectionStore::list(const std::string& organization_id,
                                                       const paging::PageRequest& request,
                                                       const paging::TokenCodec& codec) {
  return paging::fetch_page_as<Connection>(
      db_, paging::rows_of_organization(kColumns, "sso_connections", organization_id), request,
      codec, from_row);
}

Status ConnectionStore::update(Connection& c, const std::optional<std::string>& client_secret) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Value sealed, sealed_secret_param(master_key_, client_secret, "sso_connection", c.id));
  std::string now = db_now();
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("UPDATE sso_connections SET name = ?, state = ?, config = ?, "
                  "secret_sealed = COALESCE(?, secret_sealed), update_time = ? WHERE id = ?",
                  {c.name, c.state, json::write(config_json(c)), sealed, now, c.id})
          .status());
  if (client_secret) c.has_client_secret = true;
  c.update_time = db_time_to_rfc3339(now);
  return Status::ok();
}

Status ConnectionStore::remove(const std::string& organization_id, const std::string& id) {
  if (!is_valid_id(id, "conn_")) return not_found();
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t removed,
      db_.execute("DELETE FROM sso_connections WHERE id = ? AND organization_id = ?",
                  {id, organization_id}));
  if (removed == 0) return not_found();
  return Status::ok();
}

Result<std::optional<Connection>> ConnectionStore::active_of_organization(
    const std::string& organization_id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kColumns +
                    " FROM sso_connections WHERE organization_id = ? AND state = 'active' "
                    "ORDER BY create_time, id LIMIT 1",
                {organization_id}));
  if (rows.empty()) return std::optional<Connection>();
  PORTCULLIS_ASSIGN_OR_RETURN(Connection c, from_row(rows[0]));
  return std::optional<Connection>(std::move(c));
}

Status ConnectionStore::ensure_sp_keys(Connection& c, int64_t now) {
  if (c.type != "saml" || !c.sp_certificates.signing.empty()) return Status::ok();
  PORTCULLIS_ASSIGN_OR_RETURN(SpKeys keys, generate_sp_keys(c.id, now));
  PORTCULLIS_ASSIGN_OR_RETURN(std::string sealed,
                              master_key_.seal(private_keys_json(keys), keys_aad(c.id)));
  // Only where none are stored: two workers racing here keep the first pair, and both read it.
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("UPDATE sso_connections SET sp_certificates = ?, sp_keys_sealed = ? "
                  "WHERE id = ? AND sp_keys_sealed IS NULL",
                  {certificates_json(keys.certificates), sealed, c.id})
          .status());
  PORTCULLIS_ASSIGN_OR_RETURN(Connection stored, find(c.id));
  c.sp_certificates = std::move(stored.sp_certificates);
  return Status::ok();
}

Result<SpKeys> ConnectionStore::sp_keys(const Connection& c) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string text,
                              open_sealed(db_, master_key_, "sp_keys_sealed", c.id, keys_aad(c.id),
                                          "the connection has no SP keys"));
  SpKeys keys;
  keys.certificates = c.sp_certificates;
  PORTCULLIS_RETURN_IF_ERROR(read_private_keys_json(text, keys));
  return keys;
}

Result<SamlSp> ConnectionStore::saml_sp(Connection& c, const std::string& base_url, int64_t now) {
  PORTCULLIS_RETURN_IF_ERROR(ensure_sp_keys(c, now));
  SamlSp out = sp_of(base_url, c.id);
  out.certificates = c.sp_certificates;
  out.keys = [db = &db_, key = &master_key_, c]() -> Result<SpKeys> {
    return ConnectionStore(*db, *key).sp_keys(c);
  };
  return out;
}

Result<std::vector<ConnectionStore::Version>> ConnectionStore::active_versions(size_t limit) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT id, type, update_time FROM sso_connections WHERE state = 'active' "
                "ORDER BY update_time DESC, id LIMIT ?",
                {static_cast<int64_t>(limit)}));
  std::vector<Version> out;
  for (const store::Row& r : rows) out.push_back(Version{r.str(0), r.str(1), r.str(2)});
  return out;
}

Result<std::string> ConnectionStore::client_secret(const Connection& c) {
  return open_sealed(db_, master_key_, "secret_sealed", c.id, secret_aad("sso_connection", c.id),
                     "the connection has no client secret");
}

}  // namespace portcullis::sso
