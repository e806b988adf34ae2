#include "sso/sp_keys.h"

#include <json/value.h>

#include "crypto/rsa.h"
#include "crypto/x509.h"
#include "format/json.h"

namespace portcullis::sso {
namespace {

struct Pair {
  std::string key;
  std::string certificate;
};

Result<Pair> key_pair(const std::string& common_name, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(crypto::RsaPrivateKey key, crypto::RsaPrivateKey::generate(2048));
  constexpr int64_t kDay = 86400;
  PORTCULLIS_ASSIGN_OR_RETURN(std::string cert,
                              crypto::self_signed_certificate(key, common_name, now - kDay,
                                                              now + kSpCertificateDays * kDay));
  PORTCULLIS_ASSIGN_OR_RETURN(std::string pem, key.to_pem());
  return Pair{std::move(pem), std::move(cert)};
}

}  // namespace

Result<SpKeys> generate_sp_keys(const std::string& connection_id, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(Pair signing, key_pair("SAML SP signing " + connection_id, now));
  PORTCULLIS_ASSIGN_OR_RETURN(Pair encryption,
                              key_pair("SAML SP encryption " + connection_id, now));
  SpKeys keys;
  keys.certificates = {std::move(signing.certificate), std::move(encryption.certificate)};
  keys.signing_key = std::move(signing.key);
  keys.encryption_key = std::move(encryption.key);
  return keys;
}

std::string private_keys_json(const SpKeys& keys) {
  Json::Value v(Json::objectValue);
  v["signing_key"] = keys.signing_key;
  v["encryption_key"] = keys.encryption_key;
  return json::write(v);
}

Status read_private_keys_json(const std::string& text, SpKeys& keys) {
  auto v = json::parse(text);
  if (!v || !v->isObject() || !(*v)["signing_key"].isString() ||
      !(*v)["encryption_key"].isString()) {
    return Status::internal("the sealed SP keys are not readable");
  }
  keys.signing_key = (*v)["signing_key"].asString();
  keys.encryption_key = (*v)["encryption_key"].asString();
  return Status::ok();
}

}  // namespace portcullis::sso
