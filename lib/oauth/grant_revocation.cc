#include "oauth/grant_revocation.h"

namespace portcullis::oauth {
namespace {

// `where` is one of the closed set of conditions below, never a caller's text.
Status revoke_where(store::Db& db, const std::string& where, const store::Params& owner,
                    std::string_view reason, int64_t now) {
  store::Params tokens = {now};
  tokens.insert(tokens.end(), owner.begin(), owner.end());
  tokens.emplace_back(now);
  PORTCULLIS_RETURN_IF_ERROR(db.execute("UPDATE access_tokens a JOIN grants g ON a.grant_id = g.id "
                                        "SET a.revoked_at = ? WHERE " +
                                            where +
                                            " AND a.revoked_at IS NULL AND a.expires_at > ?",
                                        tokens)
                                 .status());
  store::Params grants = {now, std::string(reason)};
  grants.insert(grants.end(), owner.begin(), owner.end());
  return db
      .execute("UPDATE grants g SET g.revoked_at = ?, g.revoke_reason = ? WHERE " + where +
                   " AND g.revoked_at IS NULL",
               grants)
      .status();
}

}  // namespace

Status revoke_all_grants(store::Db& db, GrantsOf owner, const std::string& owner_id,
                         std::string_view reason, int64_t now) {
  const char* where = owner == GrantsOf::kResource       ? "g.resource_id = ?"
                      : owner == GrantsOf::kClient       ? "g.client_id = ?"
                      : owner == GrantsOf::kOrganization ? "g.organization_id = ?"
                                                         : "g.user_id = ?";
  return revoke_where(db, where, {owner_id}, reason, now);
}

Status revoke_grants_of_membership(store::Db& db, const std::string& organization_id,
                                   const std::string& user_id, std::string_view reason,
                                   int64_t now) {
  return revoke_where(db, "g.user_id = ? AND g.organization_id = ?", {user_id, organization_id},
                      reason, now);
}

Status revoke_grants_of_deleted_user(store::Db& db, const std::string& user_id, int64_t now) {
  PORTCULLIS_RETURN_IF_ERROR(revoke_all_grants(db, GrantsOf::kUser, user_id, "user_deleted", now));
  return db
      .execute(
          "DELETE r FROM refresh_tokens r JOIN grants g ON r.grant_id = g.id "
          "WHERE g.user_id = ?",
          {user_id})
      .status();
}

}  // namespace portcullis::oauth
