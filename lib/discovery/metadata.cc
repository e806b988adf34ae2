#include "discovery/metadata.h"

#include "management/scopes.h"

namespace portcullis::discovery {
namespace {

Json::Value array_of(std::initializer_list<const char*> items) {
  Json::Value a(Json::arrayValue);
  for (const char* i : items) a.append(i);
  return a;
}

}  // namespace

Json::Value environment_metadata(const config::Config& config) {
  Json::Value m(Json::objectValue);
  m["issuer"] = config.base_url;
  m["token_endpoint"] = config.base_url + "/oauth/token";
  m["jwks_uri"] = config.base_url + "/keys";
  m["grant_types_supported"] = array_of({"client_credentials"});
  m["token_endpoint_auth_methods_supported"] =
      array_of({"client_secret_basic", "client_secret_post"});
  // The environment issuer has no authorization endpoint: it issues no codes (RFC 8414 still
  // requires the member, and an empty list says exactly that).
  m["response_types_supported"] = Json::Value(Json::arrayValue);
  Json::Value scopes(Json::arrayValue);
  for (const auto& s : management::all_scopes()) scopes.append(s);
  m["scopes_supported"] = scopes;
  return m;
}

Json::Value environment_openid_configuration(const config::Config& config) {
  Json::Value m = environment_metadata(config);
  m["subject_types_supported"] = array_of({"public"});
  m["id_token_signing_alg_values_supported"] = array_of({"RS256"});
  return m;
}

}  // namespace portcullis::discovery
