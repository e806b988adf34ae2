#include "tokens/grant_revocation.h"

namespace portcullis::oauth {

Status revoke_all_grants(store::Db& db, GrantsOf owner, const std::string& owner_id,
                         std::string_view reason, int64_t now) {
  // Column names are chosen here from a closed set, never from a caller's text.
  const std::string column = owner == GrantsOf::kResource ? "resource_id"
                             : owner == GrantsOf::kClient ? "client_id"
                                                          : "user_id";
  PORTCULLIS_RETURN_IF_ERROR(db.execute("UPDATE access_tokens a JOIN grants g ON a.grant_id = g.id "
                                        "SET a.revoked_at = ? "
                                        "WHERE g." +
                                            column +
                                            " = ? AND a.revoked_at IS NULL AND a.expires_at > ?",
                                        {now, owner_id, now})
                                 .status());
  return db
      .execute("UPDATE grants SET revoked_at = ?, revoke_reason = ? WHERE " + column +
                   " = ? AND revoked_at IS NULL",
               {now, std::string(reason), owner_id})
      .status();
}

}  // namespace portcullis::oauth
