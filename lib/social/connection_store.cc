#include "social/connection_store.h"

#include "core/ids.h"
#include "core/time.h"
#include "format/json.h"
#include "sso/stored_connection.h"

namespace portcullis::social {
namespace {

const std::string kColumns = std::string("id, provider, name, enabled, ") + sso::kStoredColumns;

Result<SocialConnection> from_row(const store::Row& r) {
  PORTCULLIS_ASSIGN_OR_RETURN(sso::StoredColumns stored, sso::read_stored_columns(r, 4));
  SocialConnection c;
  c.id = r.str(0);
  c.provider = r.str(1);
  c.name = r.str(2);
  c.enabled = r.boolean(3);
  sso::apply_stored_columns(std::move(stored), c);
  return c;
}

Status not_found() {
  return Status::not_found("no such social connection");
}

}  // namespace

Status SocialConnectionStore::create(SocialConnection& c, const std::string& client_secret) {
  c.id = new_id("soc_");
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::string sealed,
      master_key_.seal(client_secret, sso::secret_aad("social_connection", c.id)));
  c.has_client_secret = true;
  std::string now = db_now();
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute(
             "INSERT INTO social_connections (id, provider, name, enabled, config, "
             "secret_sealed, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
             {c.id, c.provider, c.name, c.enabled, json::write(config_json(c)), sealed, now, now})
          .status());
  c.create_time = db_time_to_rfc3339(now);
  c.update_time = c.create_time;
  return Status::ok();
}

Result<SocialConnection> SocialConnectionStore::get(const std::string& id) {
  if (!is_valid_id(id, "soc_")) return not_found();
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kColumns + " FROM social_connections WHERE id = ?", {id}));
  if (rows.empty()) return not_found();
  return from_row(rows[0]);
}

Result<paging::Page<SocialConnection>> SocialConnectionStore::list(
    const paging::PageRequest& request, const paging::TokenCodec& codec) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      paging::Page<store::Row> rows,
      paging::fetch_page(db_, {.columns = kColumns, .from = "social_connections"}, request, codec));
  return paging::convert_page<SocialConnection>(std::move(rows), from_row);
}

Result<std::vector<SocialConnection>> SocialConnectionStore::enabled() {
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                              db_.query(std::string("SELECT ") + kColumns +
                                            " FROM social_connections WHERE enabled ORDER BY "
                                            "create_time, id LIMIT 20",
                                        {}));
  std::vector<SocialConnection> out;
  for (const auto& row : rows) {
    PORTCULLIS_ASSIGN_OR_RETURN(SocialConnection c, from_row(row));
    out.push_back(std::move(c));
  }
  return out;
}

Status SocialConnectionStore::update(SocialConnection& c,
                                     const std::optional<std::string>& client_secret) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Value sealed,
      sso::sealed_secret_param(master_key_, client_secret, "social_connection", c.id));
  std::string now = db_now();
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("UPDATE social_connections SET name = ?, enabled = ?, config = ?, "
                  "secret_sealed = COALESCE(?, secret_sealed), update_time = ? WHERE id = ?",
                  {c.name, c.enabled, json::write(config_json(c)), sealed, now, c.id})
          .status());
  if (client_secret) c.has_client_secret = true;
  c.update_time = db_time_to_rfc3339(now);
  return Status::ok();
}

Status SocialConnectionStore::remove(const std::string& id) {
  if (!is_valid_id(id, "soc_")) return not_found();
  PORTCULLIS_ASSIGN_OR_RETURN(uint64_t removed,
                              db_.execute("DELETE FROM social_connections WHERE id = ?", {id}));
  if (removed == 0) return not_found();
  return Status::ok();
}

Result<std::string> SocialConnectionStore::client_secret(const SocialConnection& c) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT secret_sealed FROM social_connections WHERE id = ? AND secret_sealed IS "
                "NOT NULL",
                {c.id}));
  if (rows.empty()) return Status::failed_precondition("the connection has no client secret");
  return master_key_.open(rows[0].str(0), sso::secret_aad("social_connection", c.id));
}

}  // namespace portcullis::social
