#include "dpop/proof_key.h"

#include "crypto/base64.h"
#include "crypto/hash.h"

namespace portcullis::dpop {
namespace {

template <typename Members>
std::string thumbprint_of(const Members& members) {
  // Every value is a fixed name or base64url, so no JSON escaping is ever needed.
  std::string canonical = "{";
  for (const auto& [name, value] : members) {
    if (canonical.size() > 1) canonical += ',';
    canonical += '"';
    canonical += name;
    canonical += "\":\"";
    canonical += value;
    canonical += '"';
  }
  canonical += '}';
  return crypto::base64url_encode(crypto::sha256(canonical));
}

}  // namespace

std::string jwk_thumbprint(
    std::initializer_list<std::pair<std::string_view, std::string_view>> members) {
  return thumbprint_of(members);
}

std::string jwk_thumbprint(const std::vector<std::pair<std::string_view, std::string>>& members) {
  return thumbprint_of(members);
}

Result<ProofKey> ProofKey::from_jwk(const Json::Value& jwk, std::string_view alg) {
  const std::optional<jose::JwsAlg> known = jose::alg_from_name(alg);
  if (!known) return Status::invalid_argument("alg is not one of ES256, RS256, EdDSA");
  PORTCULLIS_ASSIGN_OR_RETURN(jose::JwsPublicKey key, jose::JwsPublicKey::from_jwk(jwk, *known));
  // From the parsed key (RFC 7638's required members): leading zero bytes a client added to an
  // RSA n or e do not change the thumbprint.
  std::string thumbprint = jwk_thumbprint(key.required_members());
  return ProofKey(std::move(key), std::move(thumbprint));
}

}  // namespace portcullis::dpop
