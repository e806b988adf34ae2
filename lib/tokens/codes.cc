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

std::string CodeStore::hash(const std::string& code) {
  return crypto::sha256(code);
}

Result<std::string> CodeStore::issue(const CodeBinding& b, int64_t now) {
  std::string code = crypto::random_token(32);
  PORTCULLIS_RETURN_IF_ERROR(
      db_.execute(
             "INSERT INTO authorization_codes (code_hash, login_request_id, client_id, "
             "resource_id, redirect_uri, code_challenge, scope, user_id, auth_time, "
             "organization_id, nonce, expires_at, dpop_jkt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
             "?, ?, ?)",
             {hash(code), b.login_request_id, b.client_id, b.resource_id, b.redirect_uri,
              b.code_challenge, b.scope, b.user_id, b.auth_time, optional_text(b.organization_id),
              optional_text(b.nonce), now + kCodeLifetimeSeconds, optional_text(b.dpop_jkt)})
          .status());
  return code;
}

Result<StoredCode> CodeStore::find(const std::string& code) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT c.login_request_id, c.client_id, c.resource_id, c.redirect_uri, "
                "c.code_challenge, c.scope, c.user_id, c.auth_time, c.organization_id, c.nonce, "
                "c.expires_at, c.used_at, c.grant_id, c.dpop_jkt, u.active, r.id, r.server_url, "
                "r.access_token_ttl_seconds, r.access_token_signing_alg FROM authorization_codes c "
                "LEFT JOIN users u ON u.id "
                "= c.user_id LEFT JOIN resources r ON r.id = c.resource_id WHERE c.code_hash = ?",
                {hash(code)}));
  if (rows.empty()) return Status::not_found("unknown authorization code");
  const store::Row& r = rows[0];
  StoredCode out;
  out.binding = CodeBinding{r.str(0), r.str(1), r.str(2), r.str(3), r.str(4), r.str(5),
                            r.str(6), r.i64(7), r.str(8), r.str(9), r.str(13)};
  out.expires_at = r.i64(10);
  if (!r.is_null(11)) out.used_at = r.i64(11);
  out.grant_id = r.str(12);
  if (!r.is_null(14)) out.user_active = r.boolean(14);
  if (!r.is_null(15)) {
    out.resource = GrantResource{r.str(15), r.str(16), static_cast<int>(r.i64(17)),
                                 signing_alg_column(r.str(18))};
  }
  return out;
}

Result<bool> CodeStore::claim(const std::string& code, const std::string& grant_id, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t changed,
      db_.execute("UPDATE authorization_codes SET used_at = ?, grant_id = ? WHERE code_hash = ? "
                  "AND used_at IS NULL",
                  {now, grant_id, hash(code)}));
  return changed == 1;
}

Status CodeStore::prune(int64_t now) {
  // Used codes are kept for a while so a late replay still finds (and revokes) its grant.
  return db_.execute("DELETE FROM authorization_codes WHERE expires_at < ?", {now - 86400})
      .status();
}

}  // namespace portcullis::oauth
