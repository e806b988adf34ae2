#include "tokens/access_token.h"

#include <json/value.h>

#include <map>

#include "crypto/random.h"
#include "jose/jwt.h"
#include "tokens/grants.h"

namespace portcullis::oauth {
namespace {

constexpr std::string_view kGrantPrefix = "grt_";
constexpr size_t kMaxGrantIdBytes = 40;  // grants.id

}  // namespace

std::optional<std::string_view> grant_of_jti(std::string_view jti) {
  size_t dot = jti.find('.');
  if (dot == std::string_view::npos || dot > kMaxGrantIdBytes ||
      jti.substr(0, kGrantPrefix.size()) != kGrantPrefix) {
    return std::nullopt;
  }
  return jti.substr(0, dot);
}

Result<AccessToken> mint_access_token(const keys::KeyRing& keys, const AccessTokenRequest& request,
                                      int64_t now) {
  const keys::LiveKey* signer = keys.signer(now, request.alg);
  if (!signer) return Status::unavailable("no signing key is available").with_retry_after(5);
  AccessToken out;
  // base64url never holds a dot, nor does a grant id: the first dot ends the grant.
  out.jti = request.grant_id.empty() ? crypto::random_token(16)
                                     : request.grant_id + "." + crypto::random_token(16);
  out.issued_at = now;
  out.expires_at = now + request.lifetime_seconds;
  Json::Value claims(Json::objectValue);
  claims["iss"] = request.issuer;
  claims["sub"] = request.subject;
  claims["aud"] = request.audience;
  claims["client_id"] = request.client_id;
  claims["scope"] = request.scope;
  claims["iat"] = static_cast<Json::Int64>(now);
  claims["nbf"] = static_cast<Json::Int64>(now);
  claims["exp"] = static_cast<Json::Int64>(out.expires_at);
  claims["jti"] = out.jti;
  if (request.auth_time) claims["auth_time"] = static_cast<Json::Int64>(*request.auth_time);
  if (!request.organization_id.empty()) claims["org_id"] = request.organization_id;
  if (!request.dpop_jkt.empty()) claims["cnf"]["jkt"] = request.dpop_jkt;
  PORTCULLIS_ASSIGN_OR_RETURN(out.jwt,
                              jose::sign_jwt(claims, "at+jwt", signer->id, signer->private_key));
  return out;
}

Result<std::vector<RequiredSigner>> required_signers(store::Db& db, const keys::KeyRing& ring,
                                                     int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db.query("SELECT access_token_signing_alg, COUNT(*) FROM resources GROUP BY "
               "access_token_signing_alg"));
  std::map<jose::JwsAlg, int64_t> resources{{jose::JwsAlg::kRS256, 0}};
  for (const store::Row& r : rows) resources[signing_alg_column(r.str(0))] += r.i64(1);
  std::vector<RequiredSigner> out;
  for (jose::JwsAlg alg : jose::kAccessTokenAlgs) {
    auto it = resources.find(alg);
    if (it != resources.end()) out.push_back({alg, it->second, ring.signer(now, alg)});
  }
  return out;
}

}  // namespace portcullis::oauth
