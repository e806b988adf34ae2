#include "tokens/codes.h"

#include "crypto/hash.h"
#include "crypto/random.h"

namespace portcullis::oauth {
namespace {

store::Value optional_text(const std::string& s) {
  if (s.empty()) return nullptr;
  return s;
}

}  // namespace

Result<std::string> CodeStore::issue(const CodeBinding& b, int64_t now) {
  std::string code = crypto::random_token(32);
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute(
             "INSERT INTO authorization_codes (code_hash, login_request_id, client_id, "
             "resource_id, redirect_uri, code_challenge, scope, user_id, auth_time, "
             "organization_id, nonce, expires_at, dpop_jkt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
             "?, ?, ?)",
             {crypto::sha256(code), b.login_request_id, b.client_id, b.resource_id, b.redirect_uri,
              b.code_challenge, b.scope, b.user_id, b.auth_time, optional_text(b.organization_id),
              optional_text(b.nonce), now + kCodeLifetimeSeconds, optional_text(b.dpop_jkt)})
          .status());
  return code;
}

Result<StoredCode> CodeStore::lock(const std::string& code) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT login_request_id, client_id, resource_id, redirect_uri, code_challenge, "
                "scope, user_id, auth_time, organization_id, nonce, expires_at, used_at, grant_id, "
                "dpop_jkt "
                "FROM authorization_codes WHERE code_hash = ? FOR UPDATE",
                {crypto::sha256(code)}));
  if (rows.empty()) return Status::not_found("unknown authorization code");
  const store::Row& r = rows[0];
  StoredCode out;
  out.binding = CodeBinding{r.str(0), r.str(1), r.str(2), r.str(3), r.str(4), r.str(5),
                            r.str(6), r.i64(7), r.str(8), r.str(9), r.str(13)};
  out.expires_at = r.i64(10);
  if (!r.is_null(11)) out.used_at = r.i64(11);
  out.grant_id = r.str(12);
  return out;
}

Status CodeStore::mark_used(const std::string& code, const std::string& grant_id, int64_t now) {
  return db_
      .execute("UPDATE authorization_codes SET used_at = ?, grant_id = ? WHERE code_hash = ?",
               {now, grant_id, crypto::sha256(code)})
      .status();
}

Status CodeStore::prune(int64_t now) {
  // Used codes are kept for a while so a late replay still finds (and revokes) its grant.
  return db_.execute("DELETE FROM authorization_codes WHERE expires_at < ?", {now - 86400})
      .status();
}

}  // namespace portcullis::oauth
