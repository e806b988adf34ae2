#include "management/api_clients.h"

#include "core/ids.h"
#include "core/time.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "format/scope_list.h"
#include "management/scopes.h"

namespace portcullis::management {
namespace {

constexpr const char* kColumns = "id, name, scopes, create_time, secret_hash";

ApiClient from_row(const store::Row& r) {
  return ApiClient{r.str(0), r.str(1), format::scope_set(r.str(2)), db_time_to_rfc3339(r.str(3))};
}

}  // namespace

Result<NewApiClient> ApiClientStore::create(const std::string& name,
                                            const std::set<std::string>& scopes) {
  if (name.empty() || name.size() > 200) {
    return Status::invalid_argument("name must be 1 to 200 characters");
  }
  NewApiClient out;
  out.client.id = new_id("api_");
  out.client.name = name;
  out.client.scopes = scopes;
  out.secret = crypto::random_token(32);
  // The row is not read back: a 201 must mean exactly "this row was committed".
  std::string created = db_now();
  out.client.create_time = db_time_to_rfc3339(created);
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute("INSERT INTO api_clients (id, name, secret_hash, scopes, create_time) "
                  "VALUES (?, ?, ?, ?, ?)",
                  {out.client.id, name, crypto::sha256(out.secret), format::join_scopes(scopes),
                   created})
          .status());
  return out;
}

Result<ApiClient> ApiClientStore::get(const std::string& id) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kColumns + " FROM api_clients WHERE id = ?", {id}));
  if (rows.empty()) return Status::not_found("no API client " + id);
  return from_row(rows[0]);
}

Result<ApiClient> ApiClientStore::authenticate(const std::string& id, const std::string& secret) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kColumns + " FROM api_clients WHERE id = ?", {id}));
  // Hash even for an unknown id so both failures cost the same.
  std::string presented = crypto::sha256(secret);
  if (rows.empty() || !crypto::constant_time_equals(presented, rows[0].str(4))) {
    return Status::unauthenticated("client authentication failed");
  }
  return from_row(rows[0]);
}

Result<std::vector<ApiClient>> ApiClientStore::list() {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kColumns + " FROM api_clients ORDER BY create_time, id"));
  std::vector<ApiClient> out;
  out.reserve(rows.size());
  for (const auto& r : rows) out.push_back(from_row(r));
  return out;
}

Result<paging::Page<ApiClient>> ApiClientStore::list(const paging::PageRequest& request,
                                                     const paging::TokenCodec& codec) {
  return paging::fetch_page_as<ApiClient>(
      db_, paging::KeysetQuery{.columns = kColumns, .from = "api_clients"}, request, codec,
      [](const store::Row& r) -> Result<ApiClient> { return from_row(r); });
}

Status ApiClientStore::remove(const std::string& id) {
  PORTCULLIS_ASSIGN_OR_RETURN(uint64_t n,
                              db_.execute("DELETE FROM api_clients WHERE id = ?", {id}));
  if (n == 0) return Status::not_found("no API client " + id);
  return Status::ok();
}

}  // namespace portcullis::management
