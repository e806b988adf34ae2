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

std::optional<StoredCode> stored_code_from_row(const store::Row& r, size_t at) {
  if (r.is_null(at + 10)) return std::nullopt;  // expires_at: NOT NULL in every stored code
  StoredCode out;
  out.binding = CodeBinding{r.str(at),     r.str(at + 1), r.str(at + 2), r.str(at + 3),
                            r.str(at + 4), r.str(at + 5), r.str(at + 6), r.i64(at + 7),
                            r.str(at + 8), r.str(at + 9), r.str(at + 13)};
  out.expires_at = r.i64(at + 10);
  if (!r.is_null(at + 11)) out.used_at = r.i64(at + 11);
  out.grant_id = r.str(at + 12);
  if (!r.is_null(at + 14)) out.user_active = r.boolean(at + 14);
  if (!r.is_null(at + 15)) {
    out.resource = GrantResource{r.str(at + 15), r.str(at + 16), static_cast<int>(r.i64(at + 17)),
                                 signing_alg_column(r.str(at + 18))};
  }
  return out;
}

Result<StoredCode> CodeStore::find(const std::string& code) {
  static const std::string kSql = std::string("SELECT ") + kStoredCodeColumns +
                                  " FROM authorization_codes c " + kStoredCodeJoins +
                                  " WHERE c.code_hash = ?";
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows, db_.query(kSql, {hash(code)}));
  if (rows.empty()) return Status::not_found("unknown authorization code");
  auto out = stored_code_from_row(rows[0]);
  if (!out) return Status::internal("a stored authorization code has no expiry");
  return std::move(out).value();
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
