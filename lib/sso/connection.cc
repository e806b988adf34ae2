#include "sso/connection.h"

#include <algorithm>
#include <set>

#include "format/json_strings.h"
#include "sso/config_fields.h"

namespace portcullis::sso {
namespace {

using fields::https_url;
using fields::scope_tokens;
using fields::str;
using fields::strings;
using fields::text;

constexpr size_t kMaxName = 200;
constexpr size_t kMaxMetadataBytes = 256 * 1024;
constexpr size_t kMaxCertificates = 4;

const std::set<std::string, std::less<>> kOidcFields = {
    "type",         "name",          "state",  "issuer",
    "client_id",    "client_secret", "scopes", "attribute_mapping",
    "claim_mapping"};
const std::set<std::string, std::less<>> kSamlFields = {"type",
                                                        "name",
                                                        "state",
                                                        "idp_metadata_xml",
                                                        "idp_metadata_url",
                                                        "idp_entity_id",
                                                        "idp_sso_url",
                                                        "idp_certificates",
                                                        "attribute_mapping",
                                                        "idp_initiated_login_enabled",
                                                        "sign_authn_requests"};

Status read_mapping(const Json::Value& v, AttributeMapping& m) {
  if (!v.isObject()) return Status::invalid_argument("attribute_mapping must be an object");
  for (const auto& key : v.getMemberNames()) {
    std::string* target = key == "email"         ? &m.email
                          : key == "given_name"  ? &m.given_name
                          : key == "family_name" ? &m.family_name
                          : key == "external_id" ? &m.external_id
                                                 : nullptr;
    if (!target) return Status::invalid_argument("attribute_mapping: unknown field " + key);
    PORTCULLIS_ASSIGN_OR_RETURN(*target, text(v[key], "attribute_mapping." + key, 512));
  }
  return Status::ok();
}

Status apply_oidc(const Json::Value& body, Connection& c, std::optional<std::string>& secret) {
  for (const auto& key : body.getMemberNames()) {
    const Json::Value& v = body[key];
    if (key == "issuer") {
      PORTCULLIS_ASSIGN_OR_RETURN(c.issuer, https_url(v, key));
    } else if (key == "client_id") {
      PORTCULLIS_ASSIGN_OR_RETURN(c.client_id, text(v, key, 255));
    } else if (key == "client_secret") {
      PORTCULLIS_ASSIGN_OR_RETURN(std::string s, text(v, key, 1024));
      secret = std::move(s);
    } else if (key == "scopes") {
      PORTCULLIS_ASSIGN_OR_RETURN(std::vector<std::string> scopes, scope_tokens(v, false));
      if (std::find(scopes.begin(), scopes.end(), "openid") == scopes.end()) {
        return Status::invalid_argument("scopes must include openid");
      }
      c.scopes = std::move(scopes);
    } else if (key == "attribute_mapping" || key == "claim_mapping") {
      PORTCULLIS_RETURN_IF_ERROR(read_mapping(v, c.mapping));
    }
  }
  return Status::ok();
}

Status apply_saml(const Json::Value& body, Connection& c) {
  for (const auto& key : body.getMemberNames()) {
    const Json::Value& v = body[key];
    if (key == "idp_metadata_xml") {
      PORTCULLIS_ASSIGN_OR_RETURN(c.idp_metadata_xml, text(v, key, kMaxMetadataBytes));
    } else if (key == "idp_metadata_url") {
      PORTCULLIS_ASSIGN_OR_RETURN(c.idp_metadata_url, https_url(v, key));
    } else if (key == "idp_entity_id") {
      PORTCULLIS_ASSIGN_OR_RETURN(c.idp_entity_id, text(v, key, 1024));
    } else if (key == "idp_sso_url") {
      PORTCULLIS_ASSIGN_OR_RETURN(c.idp_sso_url, https_url(v, key));
    } else if (key == "idp_certificates") {
      if (!v.isArray() || v.size() > kMaxCertificates) {
        return Status::invalid_argument("idp_certificates must be an array of at most 4 PEM");
      }
      std::vector<std::string> certs;
      for (const auto& pem : v) {
        if (!pem.isString() ||
            pem.asString().find("-----BEGIN CERTIFICATE-----") == std::string::npos ||
            pem.asString().size() > 16384) {
          return Status::invalid_argument("idp_certificates must hold PEM certificates");
        }
        certs.push_back(pem.asString());
      }
      c.idp_certificates = std::move(certs);
    } else if (key == "idp_initiated_login_enabled" || key == "sign_authn_requests") {
      if (!v.isBool()) return Status::invalid_argument(key + " must be a boolean");
      (key == "sign_authn_requests" ? c.sign_authn_requests : c.idp_initiated_login_enabled) =
          v.asBool();
    } else if (key == "attribute_mapping") {
      PORTCULLIS_RETURN_IF_ERROR(read_mapping(v, c.mapping));
    }
  }
  return Status::ok();
}

}  // namespace

AttributeMapping default_mapping(const std::string& type) {
  if (type == "oidc") return {"email", "given_name", "family_name", ""};
  // Entra ID's claim URIs are tried after these (saml_attributes in docs/sso.md).
  return {"email", "given_name", "family_name", ""};
}

Status apply_body(const Json::Value& body, bool patch, Connection& c,
                  std::optional<std::string>& client_secret) {
  if (!body.isObject()) return Status::invalid_argument("the body must be a JSON object");
  if (!patch) {
    const Json::Value& type = body["type"];
    if (!type.isString() || (type.asString() != "saml" && type.asString() != "oidc")) {
      return Status::invalid_argument("type must be \"saml\" or \"oidc\"");
    }
    c.type = type.asString();
    c.mapping = default_mapping(c.type);
    if (c.type == "oidc") c.scopes = {"openid", "email", "profile"};
  } else if (body.isMember("type") &&
             !(body["type"].isString() && body["type"].asString() == c.type)) {
    return Status::invalid_argument("type cannot be changed");
  }
  const auto& allowed = c.type == "oidc" ? kOidcFields : kSamlFields;
  for (const auto& key : body.getMemberNames()) {
    if (!allowed.contains(key)) {
      return Status::invalid_argument("unknown field " + key + " for a " + c.type + " connection");
    }
  }
  if (body.isMember("name")) {
    PORTCULLIS_ASSIGN_OR_RETURN(c.name, text(body["name"], "name", kMaxName));
  } else if (!patch) {
    return Status::invalid_argument("name is required");
  }
  if (body.isMember("state")) {
    if (!patch) return Status::invalid_argument("a connection starts as a draft");
    const Json::Value& s = body["state"];
    if (!s.isString() ||
        (s.asString() != "draft" && s.asString() != "active" && s.asString() != "inactive")) {
      return Status::invalid_argument("state must be draft, active or inactive");
    }
    c.state = s.asString();
  }
  if (c.type == "oidc") {
    PORTCULLIS_RETURN_IF_ERROR(apply_oidc(body, c, client_secret));
    if (!patch && (c.issuer.empty() || c.client_id.empty() || !client_secret)) {
      return Status::invalid_argument(
          "an oidc connection needs issuer, client_id and "
          "client_secret");
    }
    return Status::ok();
  }
  PORTCULLIS_RETURN_IF_ERROR(apply_saml(body, c));
  if (!patch && c.idp_metadata_xml.empty() && c.idp_metadata_url.empty() &&
      (c.idp_entity_id.empty() || c.idp_sso_url.empty() || c.idp_certificates.empty())) {
    return Status::invalid_argument(
        "a saml connection needs idp_metadata_xml, idp_metadata_url, or idp_entity_id, "
        "idp_sso_url and idp_certificates");
  }
  return Status::ok();
}

Json::Value config_json(const Connection& c) {
  Json::Value v(Json::objectValue);
  Json::Value m(Json::objectValue);
  m["email"] = c.mapping.email;
  m["given_name"] = c.mapping.given_name;
  m["family_name"] = c.mapping.family_name;
  if (!c.mapping.external_id.empty()) m["external_id"] = c.mapping.external_id;
  v["attribute_mapping"] = m;
  if (c.type == "oidc") {
    v["issuer"] = c.issuer;
    v["client_id"] = c.client_id;
    v["scopes"] = strings(c.scopes);
    return v;
  }
  if (!c.idp_metadata_xml.empty()) v["idp_metadata_xml"] = c.idp_metadata_xml;
  if (!c.idp_metadata_url.empty()) v["idp_metadata_url"] = c.idp_metadata_url;
  if (!c.idp_entity_id.empty()) v["idp_entity_id"] = c.idp_entity_id;
  if (!c.idp_sso_url.empty()) v["idp_sso_url"] = c.idp_sso_url;
  if (!c.idp_certificates.empty()) v["idp_certificates"] = strings(c.idp_certificates);
  v["idp_initiated_login_enabled"] = c.idp_initiated_login_enabled;
  v["sign_authn_requests"] = c.sign_authn_requests;
  return v;
}

void read_config(const Json::Value& v, Connection& c) {
  c.mapping = default_mapping(c.type);
  const Json::Value& m = v["attribute_mapping"];
  if (!str(m, "email").empty()) c.mapping.email = str(m, "email");
  if (!str(m, "given_name").empty()) c.mapping.given_name = str(m, "given_name");
  if (!str(m, "family_name").empty()) c.mapping.family_name = str(m, "family_name");
  c.mapping.external_id = str(m, "external_id");
  c.issuer = str(v, "issuer");
  c.client_id = str(v, "client_id");
  c.scopes = json::string_elements(v["scopes"]);
  c.idp_metadata_xml = str(v, "idp_metadata_xml");
  c.idp_metadata_url = str(v, "idp_metadata_url");
  c.idp_entity_id = str(v, "idp_entity_id");
  c.idp_sso_url = str(v, "idp_sso_url");
  c.idp_certificates = json::string_elements(v["idp_certificates"]);
  // Only this name: the "idp_initiated" flag of earlier versions had no effect, and turning
  // IdP-initiated login on must be a deliberate act, never an upgrade's.
  auto flag = [&v](const char* key) { return v.isObject() && v[key].isBool() && v[key].asBool(); };
  c.idp_initiated_login_enabled = flag("idp_initiated_login_enabled");
  c.sign_authn_requests = flag("sign_authn_requests");
}

Json::Value to_json(const Connection& c, const std::string& base_url) {
  Json::Value v = config_json(c);
  v["id"] = c.id;
  v["organization_id"] = c.organization_id;
  v["type"] = c.type;
  v["name"] = c.name;
  v["state"] = c.state;
  if (c.type == "oidc") {
    v["client_secret_set"] = c.has_client_secret;
    v["redirect_uri"] = base_url + "/sso/oidc/callback";
  } else {
    const std::string sp = base_url + "/sso/saml/" + c.id;
    v["sp_entity_id"] = sp + "/metadata";
    v["sp_acs_url"] = sp + "/acs";
    v["sp_metadata_url"] = sp + "/metadata";
    if (!c.sp_certificates.signing.empty()) {
      v["sp_signing_certificate"] = c.sp_certificates.signing;
      v["sp_encryption_certificate"] = c.sp_certificates.encryption;
    }
  }
  v["create_time"] = c.create_time;
  v["update_time"] = c.update_time;
  return v;
}

Status check_complete(const Connection& c) {
  if (c.type == "oidc") {
    if (c.issuer.empty() || c.client_id.empty() || !c.has_client_secret) {
      return Status::failed_precondition(
          "the connection needs issuer, client_id and "
          "client_secret before it can be activated");
    }
    return Status::ok();
  }
  if (c.idp_metadata_xml.empty() && c.idp_metadata_url.empty() &&
      (c.idp_entity_id.empty() || c.idp_sso_url.empty() || c.idp_certificates.empty())) {
    return Status::failed_precondition(
        "the connection needs the IdP's metadata (idp_metadata_xml or idp_metadata_url), or "
        "idp_entity_id, idp_sso_url and idp_certificates, before it can be activated");
  }
  return Status::ok();
}

}  // namespace portcullis::sso
