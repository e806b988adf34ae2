// TEMPORARY until the organizations CRUD (branch listing) is merged: then this asks its store.
#include "organizations_lookup.h"

#include <regex>

namespace portcullis::api_worker {

Result<std::string> existing_organization(server::Context& ctx) {
  std::string id = ctx.request.path_param("organization_id");
  static const std::regex kFormat("org_[A-Za-z0-9_-]{1,28}");
  if (!std::regex_match(id, kFormat)) {
    return Status::invalid_argument("organization_id must match ^org_[A-Za-z0-9_-]{1,28}$");
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows, ctx.services.db.query("SELECT id FROM organizations WHERE id = ?", {id}));
  if (rows.empty()) return Status::not_found("no organization " + id);
  return id;
}

}  // namespace portcullis::api_worker
