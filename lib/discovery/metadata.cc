#include "discovery/metadata.h"

#include "dpop/proof_key.h"
#include "management/scopes.h"

namespace portcullis::discovery {
namespace {

Json::Value array_of(std::initializer_list<const char*> items) {
  Json::Value a(Json::arrayValue);
  for (const char* i : items) a.append(i);
  return a;
}

// The endpoints every issuer of this environment shares: one token endpoint, one key set, one
// revocation and one introspection endpoint serve them all.
void add_shared_endpoints(const config::Config& config, Json::Value& m) {
  m["token_endpoint"] = config.base_url + "/oauth/token";
  m["jwks_uri"] = config.base_url + "/keys";
  m["revocation_endpoint"] = config.base_url + "/oauth/revoke";
  m["introspection_endpoint"] = config.base_url + "/oauth/introspect";
  // RFC 9449 §5.1: the token endpoint binds tokens to DPoP keys of these algorithms.
  Json::Value algs(Json::arrayValue);
  for (std::string_view alg : dpop::kProofAlgorithms) algs.append(std::string(alg));
  m["dpop_signing_alg_values_supported"] = algs;
}

// OpenID Discovery 1.0 §3 requires these beside RFC 8414's; without them an OIDC client's
// schema check fails on the whole document. Portcullis issues no ID tokens of its own, so the
// values describe what it would sign with.
void add_openid_fields(Json::Value& m) {
  m["subject_types_supported"] = array_of({"public"});
  m["id_token_signing_alg_values_supported"] = array_of({"RS256"});
}

Json::Value scope_names(const oauth::Resource& resource) {
  Json::Value a(Json::arrayValue);
  for (const auto& s : resource.scopes) a.append(s.name);
  return a;
}

}  // namespace

Json::Value environment_metadata(const config::Config& config) {
  Json::Value m(Json::objectValue);
  m["issuer"] = config.base_url;
  add_shared_endpoints(config, m);
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

Json::Value resource_metadata(const config::Config& config, const oauth::Resource& resource) {
  Json::Value m(Json::objectValue);
  m["issuer"] = resource.issuer(config);
  m["authorization_endpoint"] = config.base_url + "/oauth/authorize";
  add_shared_endpoints(config, m);
  if (resource.dcr_enabled) {
    m["registration_endpoint"] = config.base_url + "/resources/" + resource.id + "/client_register";
  }
  m["response_types_supported"] = array_of({"code"});
  m["response_modes_supported"] = array_of({"query"});
  m["grant_types_supported"] = array_of({"authorization_code", "refresh_token"});
  m["code_challenge_methods_supported"] = array_of({"S256"});
  m["token_endpoint_auth_methods_supported"] =
      array_of({"none", "client_secret_basic", "client_secret_post"});
  m["scopes_supported"] = scope_names(resource);
  m["client_id_metadata_document_supported"] = resource.cimd_enabled;
  // Every authorization response carries `iss` (RFC 9207), success or error.
  m["authorization_response_iss_parameter_supported"] = true;
  return m;
}

Json::Value resource_openid_configuration(const config::Config& config,
                                          const oauth::Resource& resource) {
  Json::Value m = resource_metadata(config, resource);
  add_openid_fields(m);
  return m;
}

Json::Value protected_resource_metadata(const config::Config& config,
                                        const oauth::Resource& resource) {
  Json::Value m(Json::objectValue);
  m["resource"] = resource.server_url;
  m["authorization_servers"] = Json::Value(Json::arrayValue);
  m["authorization_servers"].append(resource.issuer(config));
  m["bearer_methods_supported"] = array_of({"header"});
  m["scopes_supported"] = scope_names(resource);
  return m;
}

}  // namespace portcullis::discovery
