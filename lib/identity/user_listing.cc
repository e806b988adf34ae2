#include "identity/user_listing.h"

#include "paging/counter.h"

namespace portcullis::organizations {

paging::Listing organization_users_listing(const std::string& organization_id) {
  return paging::Listing{"organization_users", "organization_id=" + organization_id};
}

Result<paging::Page<ListedUser>> list_environment_users(store::Db& db,
                                                        const paging::PageRequest& request,
                                                        const paging::TokenCodec& codec) {
  PORTCULLIS_ASSIGN_OR_RETURN(paging::Page<identity::User> users,
                              identity::UserStore(db).list(request, codec));
  std::vector<std::string> ids;
  ids.reserve(users.items.size());
  for (const auto& u : users.items) ids.push_back(u.id);
  // One query for the whole page's memberships, not one per user.
  PORTCULLIS_ASSIGN_OR_RETURN(auto memberships, MembershipStore(db).of_users(ids));
  paging::Page<ListedUser> out;
  out.items.reserve(users.items.size());
  for (auto& u : users.items) {
    ListedUser listed{std::move(u), {}};
    if (auto it = memberships.find(listed.user.id); it != memberships.end()) {
      listed.memberships = std::move(it->second);
    }
    out.items.push_back(std::move(listed));
  }
  out.next_page_token = std::move(users.next_page_token);
  out.prev_page_token = std::move(users.prev_page_token);
  out.total_size = users.total_size;
  out.total_is_lower_bound = users.total_is_lower_bound;
  return out;
}

Result<paging::Page<ListedUser>> list_organization_users(store::Db& db,
                                                         const std::string& organization_id,
                                                         const paging::PageRequest& request,
                                                         const paging::TokenCodec& codec) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows org, db.query("SELECT 1 FROM organizations WHERE id = ?", {organization_id}));
  if (org.empty()) return Status::not_found("no organization " + organization_id);
  paging::KeysetQuery query{.columns = identity::user_columns("u") + ", " + membership_columns("m"),
                            .from = "memberships m JOIN users u ON u.id = m.user_id",
                            .where = "m.organization_id = ?",
                            .params = {organization_id},
                            .time_column = "m.user_create_time",
                            .id_column = "m.user_id",
                            .total = [&] { return paging::read_count(db, organization_id); }};
  return paging::fetch_page_as<ListedUser>(
      db, query, request, codec, [](const store::Row& r) -> Result<ListedUser> {
        return ListedUser{identity::user_from_row(r, 0),
                          {membership_from_row(r, identity::kUserColumnCount)}};
      });
}

}  // namespace portcullis::organizations
