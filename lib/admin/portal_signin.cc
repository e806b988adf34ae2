#include "admin/portal_signin.h"

#include "crypto/base64.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "crypto/random.h"
#include "oauth/login_requests.h"
#include "oauth/pkce.h"
#include "tokens/codes.h"

namespace portcullis::admin {
namespace {

bool secure(const config::Config& config) {
  return config.base_url.rfind("https://", 0) == 0;
}

std::string login_cookie_name(const config::Config& config) {
  return secure(config) ? "__Host-portcullis_admin_login" : "portcullis_admin_login";
}

std::string login_cookie(const config::Config& config, const std::string& value, int64_t max_age) {
  std::string c =
      login_cookie_name(config) + "=" + value + "; Path=/; Max-Age=" + std::to_string(max_age);
  if (secure(config)) c += "; Secure";
  return c + "; HttpOnly; SameSite=Lax";
}

Status refused(std::string message) {
  return Status::permission_denied(std::move(message));
}

}  // namespace

std::string callback_url(const config::Config& config) {
  return config.base_url + "/admin/callback";
}

std::string safe_next(std::string_view next) {
  if (next.rfind("/admin", 0) != 0 || next.size() > 512) return "/admin";
  if (next.size() > 6 && next[6] != '/' && next[6] != '?') return "/admin";
  for (char c : next) {
    // Only a path and query of our own: nothing that could name another origin or split a header.
    if (static_cast<unsigned char>(c) <= 0x20 || c == '\\' || c == '"' || c == '<' || c == '>' ||
        static_cast<unsigned char>(c) >= 0x7f) {
      return "/admin";
    }
  }
  if (next.find("//") != std::string_view::npos) return "/admin";
  return std::string(next);
}

Result<StartedLogin> start_login(store::Db& db, const config::Config& config,
                                 const std::string& next, int64_t now) {
  const std::string state = crypto::random_token(16);
  const std::string verifier = crypto::random_token(32);  // 43 characters of base64url
  oauth::LoginRequest login;
  login.client_id = std::string(kPortalClientId);
  login.resource_id = "";
  login.redirect_uri = callback_url(config);
  login.state = state;
  login.code_challenge = crypto::base64url_encode(crypto::sha256(verifier));
  PORTCULLIS_RETURN_IF_ERROR(oauth::LoginRequestStore(db).create(login, now));
  // state.verifier.next: base64url has no '.', and next is kept short and plain by safe_next.
  const std::string value =
      state + "." + verifier + "." + crypto::base64url_encode(safe_next(next));
  return StartedLogin{login.id, login_cookie(config, value, oauth::kLoginRequestLifetimeSeconds)};
}

Result<SignedIn> redeem(store::Db& db, const config::Config& config, const http::Request& request,
                        const std::string& code, const std::string& state, int64_t now) {
  auto cookie = request.cookie(login_cookie_name(config));
  if (!cookie) return refused("this browser did not start the sign-in (no sign-in cookie)");
  const size_t dot1 = cookie->find('.');
  const size_t dot2 = dot1 == std::string::npos ? dot1 : cookie->find('.', dot1 + 1);
  if (dot2 == std::string::npos) return refused("the sign-in cookie is malformed");
  const std::string expected_state = cookie->substr(0, dot1);
  const std::string verifier = cookie->substr(dot1 + 1, dot2 - dot1 - 1);
  auto next = crypto::base64url_decode(cookie->substr(dot2 + 1));
  if (state.empty() || !crypto::constant_time_equals(state, expected_state)) {
    return refused("the sign-in answer does not belong to this browser (state)");
  }
  if (code.empty() || code.size() > 128) return refused("the sign-in answer holds no code");
  SignedIn out;
  PORTCULLIS_RETURN_IF_ERROR(db.transaction([&]() -> Status {
    oauth::CodeStore codes(db);
    auto stored = codes.find(code);
    if (!stored) {
      if (stored.status().code() == Code::kNotFound) return refused("unknown sign-in code");
      return stored.status();
    }
    const oauth::CodeBinding& b = stored->binding;
    if (stored->used_at) return refused("the sign-in code was used already");
    if (stored->expires_at <= now) return refused("the sign-in code expired");
    if (b.client_id != kPortalClientId || b.redirect_uri != callback_url(config)) {
      return refused("the code was not issued to the admin portal");
    }
    if (!oauth::verifier_matches_challenge(verifier, b.code_challenge)) {
      return refused("the code was issued to another sign-in (PKCE)");
    }
    // Single use: of two callbacks racing with one code, only one claims it.
    PORTCULLIS_ASSIGN_OR_RETURN(bool claimed, codes.claim(code, now));
    if (!claimed) return refused("the sign-in code was used already");
    out.user_id = b.user_id;
    out.auth_time = b.auth_time;
    return Status::ok();
  }));
  out.next = safe_next(next ? *next : "/admin");
  return out;
}

std::string clearing_login_cookie(const config::Config& config) {
  return login_cookie(config, "", 0);
}

}  // namespace portcullis::admin
