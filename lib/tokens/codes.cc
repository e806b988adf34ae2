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
      db_.query("SELECT login_request_id, client_id, resource_id, redirect_uri, code_challenge, "
                "scope, user_id, auth_time, organization_id, nonce, dpop_jkt, expires_at, used_at "
                "FROM authorization_codes WHERE code_hash = ?",
                {hash(code)}));
  if (rows.empty()) return Status::not_found("unknown authorization code");
  const store::Row& r = rows[0];
  StoredCode out;
  out.binding = CodeBinding{r.str(0), r.str(1), r.str(2), r.str(3), r.str(4), r.str(5),
                            r.str(6), r.i64(7), r.str(8), r.str(9), r.str(10)};
  out.expires_at = r.i64(11);
  if (!r.is_null(12)) out.used_at = r.i64(12);
  return out;
}

Result<bool> CodeStore::claim(const std::string& code, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      uint64_t changed,
      db_.execute("UPDATE authorization_codes SET used_at = ? WHERE code_hash = ? AND used_at IS "
                  "NULL",
                  {now, hash(code)}));
  return changed == 1;
}

SealedCode sealed_code_for(const CodeBinding& b, std::string grant_id, int64_t now) {
  return SealedCode{.grant_id = std::move(grant_id),
                    .client_digest = binding_digest(b.client_id),
                    .redirect_uri_digest = binding_digest(b.redirect_uri),
                    .resource_id = b.resource_id,
                    .user_id = b.user_id,
                    .code_challenge = b.code_challenge,
                    .scope = b.scope,
                    .organization_id = b.organization_id,
                    .dpop_jkt = b.dpop_jkt,
                    .auth_time = b.auth_time,
                    .expires_at = now + kCodeLifetimeSeconds};
}

store::Params code_state_params(const SealedCode& code) {
  return {code.grant_id, code.user_id, code.resource_id};
}

CodeState code_state_from_row(const store::Row& r, size_t at) {
  CodeState out;
  out.used = !r.is_null(at);
  if (!r.is_null(at + 1)) out.user_active = r.boolean(at + 1);
  if (!r.is_null(at + 2)) {
    out.resource = GrantResource{r.str(at + 2), r.str(at + 3), static_cast<int>(r.i64(at + 4)),
                                 signing_alg_column(r.str(at + 5))};
  }
  return out;
}

Result<CodeState> read_code_state(store::Db& db, const SealedCode& code) {
  static const std::string kSql =
      std::string("SELECT ") + kCodeStateColumns + " FROM (SELECT 1) one " + kCodeStateJoins;
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db.query(kSql, code_state_params(code)));
  if (rows.empty()) return Status::internal("no row from the code's read");
  return code_state_from_row(rows[0]);
}

Status CodeStore::prune(int64_t now) {
  // Only the admin portal's codes are stored (sealed_code.h); a day of slack for investigations.
  return db_.execute("DELETE FROM authorization_codes WHERE expires_at < ?", {now - 86400})
      .status();
}

}  // namespace portcullis::oauth
