#include "social/connection.h"

#include <set>

#include "format/json_strings.h"
#include "sso/config_fields.h"

namespace portcullis::social {
namespace {

using sso::fields::https_url;
using sso::fields::scope_tokens;
using sso::fields::str;
using sso::fields::strings;
using sso::fields::text;

constexpr size_t kMaxName = 200;

const std::set<std::string, std::less<>> kFields = {"provider",
                                                    "name",
                                                    "enabled",
                                                    "client_id",
                                                    "client_secret",
                                                    "scopes",
                                                    "issuer",
                                                    "authorization_endpoint",
                                                    "token_endpoint",
                                                    "userinfo_endpoint",
                                                    "emails_endpoint",
                                                    "claim_mapping",
                                                    "token_endpoint_auth_method"};
// Read-only members a GET body carries: ignored, so a GET body can be sent back.
const std::set<std::string, std::less<>> kReadOnly = {"id", "client_secret_set", "redirect_uri",
                                                      "create_time", "update_time"};

// What each preset fills (docs/login.md says how to register the application there).
void apply_preset(SocialConnection& c) {
  if (c.provider == "google") {
    c.name = "Google";
    c.issuer = "https://accounts.google.com";
    c.scopes = {"openid", "email", "profile"};
  } else if (c.provider == "microsoft") {
    c.name = "Microsoft";
    // Multi-tenant: discovery's issuer holds {tenantid}; the ID token's iss names its tid.
    c.issuer = "https://login.microsoftonline.com/common/v2.0";
    c.scopes = {"openid", "email", "profile"};
  } else if (c.provider == "github") {
    c.name = "GitHub";
    c.authorization_endpoint = "https://github.com/login/oauth/authorize";
    c.token_endpoint = "https://github.com/login/oauth/access_token";
    c.userinfo_endpoint = "https://api.github.com/user";
    c.emails_endpoint = "https://api.github.com/user/emails";
    c.scopes = {"read:user", "user:email"};
    c.mapping.subject = "id";
    c.mapping.given_name = "name";
    c.mapping.family_name = "";
    c.token_endpoint_auth_method = "client_secret_post";
  } else if (c.provider == "oidc") {
    c.name = "OpenID Connect";
    c.scopes = {"openid", "email", "profile"};
  } else {
    c.name = "OAuth 2.0";
    c.token_endpoint_auth_method = "client_secret_post";
  }
}

Status read_mapping(const Json::Value& v, ClaimMapping& m) {
  if (!v.isObject()) return Status::invalid_argument("claim_mapping must be an object");
  for (const auto& key : v.getMemberNames()) {
    std::string* target = key == "subject"          ? &m.subject
                          : key == "email"          ? &m.email
                          : key == "email_verified" ? &m.email_verified
                          : key == "given_name"     ? &m.given_name
                          : key == "family_name"    ? &m.family_name
                                                    : nullptr;
    if (!target) return Status::invalid_argument("claim_mapping: unknown field " + key);
    PORTCULLIS_ASSIGN_OR_RETURN(*target, text(v[key], "claim_mapping." + key, 128));
  }
  return Status::ok();
}

void put_if(Json::Value& out, const char* key, const std::string& value) {
  if (!value.empty()) out[key] = value;
}

Status check_complete(const SocialConnection& c) {
  if (c.client_id.empty()) return Status::invalid_argument("client_id is required");
  if (c.is_oidc()) {
    if (c.issuer.empty()) return Status::invalid_argument("issuer is required for oidc");
    bool openid = false;
    for (const auto& s : c.scopes) openid = openid || s == "openid";
    if (!openid) return Status::invalid_argument("scopes must include openid");
  } else if (c.authorization_endpoint.empty() || c.token_endpoint.empty() ||
             c.userinfo_endpoint.empty()) {
    return Status::invalid_argument(
        "authorization_endpoint, token_endpoint and userinfo_endpoint are required for oauth2");
  }
  return Status::ok();
}

}  // namespace

std::string identity_realm(const SocialConnection& c) {
  if (c.provider == "oidc") return c.issuer;
  if (c.provider == "oauth2") return c.id;
  return c.provider;
}

Status apply_body(const Json::Value& body, bool patch, SocialConnection& c,
                  std::optional<std::string>& client_secret) {
  if (!body.isObject()) return Status::invalid_argument("the body must be a JSON object");
  for (const auto& key : body.getMemberNames()) {
    if (!kFields.contains(key) && !kReadOnly.contains(key)) {
      return Status::invalid_argument("unknown field " + key);
    }
  }
  if (body.isMember("provider")) {
    PORTCULLIS_ASSIGN_OR_RETURN(std::string provider, text(body["provider"], "provider", 16));
    if (patch && provider != c.provider) {
      return Status::invalid_argument("provider cannot be changed");
    }
    if (provider != "google" && provider != "microsoft" && provider != "github" &&
        provider != "oidc" && provider != "oauth2") {
      return Status::invalid_argument("provider must be google, microsoft, github, oidc or oauth2");
    }
    if (!patch) {
      c.provider = provider;
      apply_preset(c);
    }
  } else if (!patch) {
    return Status::invalid_argument("provider is required");
  }
  if (!patch && !body.isMember("client_secret")) {
    return Status::invalid_argument("client_secret is required");
  }
  for (const auto& key : body.getMemberNames()) {
    const Json::Value& v = body[key];
    if (key == "name") {
      PORTCULLIS_ASSIGN_OR_RETURN(c.name, text(v, key, kMaxName));
    } else if (key == "enabled") {
      if (!v.isBool()) return Status::invalid_argument("enabled must be a boolean");
      c.enabled = v.asBool();
    } else if (key == "client_id") {
      PORTCULLIS_ASSIGN_OR_RETURN(c.client_id, text(v, key, 255));
    } else if (key == "client_secret") {
      PORTCULLIS_ASSIGN_OR_RETURN(std::string s, text(v, key, 1024));
      client_secret = std::move(s);
    } else if (key == "scopes") {
      PORTCULLIS_ASSIGN_OR_RETURN(c.scopes, scope_tokens(v, true));
    } else if (key == "issuer") {
      if (!c.is_oidc()) return Status::invalid_argument("issuer is for OpenID Connect providers");
      PORTCULLIS_ASSIGN_OR_RETURN(c.issuer, https_url(v, key));
    } else if (key == "authorization_endpoint" || key == "token_endpoint" ||
               key == "userinfo_endpoint" || key == "emails_endpoint") {
      if (c.is_oidc()) return Status::invalid_argument(key + " is for OAuth 2.0 providers");
      if (key == "emails_endpoint" && c.provider != "github") {
        return Status::invalid_argument("emails_endpoint is for github");
      }
      std::string& target = key == "authorization_endpoint" ? c.authorization_endpoint
                            : key == "token_endpoint"       ? c.token_endpoint
                            : key == "userinfo_endpoint"    ? c.userinfo_endpoint
                                                            : c.emails_endpoint;
      PORTCULLIS_ASSIGN_OR_RETURN(target, https_url(v, key));
    } else if (key == "claim_mapping") {
      PORTCULLIS_RETURN_IF_ERROR(read_mapping(v, c.mapping));
    } else if (key == "token_endpoint_auth_method") {
      if (c.is_oidc()) return Status::invalid_argument(key + " is for OAuth 2.0 providers");
      if (!v.isString() ||
          (v.asString() != "client_secret_post" && v.asString() != "client_secret_basic")) {
        return Status::invalid_argument(key + " is client_secret_post or client_secret_basic");
      }
      c.token_endpoint_auth_method = v.asString();
    }
  }
  return check_complete(c);
}

Json::Value config_json(const SocialConnection& c) {
  Json::Value j(Json::objectValue);
  j["client_id"] = c.client_id;
  j["scopes"] = strings(c.scopes);
  put_if(j, "issuer", c.issuer);
  put_if(j, "authorization_endpoint", c.authorization_endpoint);
  put_if(j, "token_endpoint", c.token_endpoint);
  put_if(j, "userinfo_endpoint", c.userinfo_endpoint);
  put_if(j, "emails_endpoint", c.emails_endpoint);
  if (!c.is_oidc()) j["token_endpoint_auth_method"] = c.token_endpoint_auth_method;
  Json::Value m(Json::objectValue);
  m["subject"] = c.mapping.subject;
  m["email"] = c.mapping.email;
  m["email_verified"] = c.mapping.email_verified;
  m["given_name"] = c.mapping.given_name;
  m["family_name"] = c.mapping.family_name;
  j["claim_mapping"] = m;
  return j;
}

void read_config(const Json::Value& j, SocialConnection& c) {
  c.client_id = str(j, "client_id");
  c.scopes = json::string_elements(j.isObject() ? j["scopes"] : Json::Value::nullSingleton());
  c.issuer = str(j, "issuer");
  c.authorization_endpoint = str(j, "authorization_endpoint");
  c.token_endpoint = str(j, "token_endpoint");
  c.userinfo_endpoint = str(j, "userinfo_endpoint");
  c.emails_endpoint = str(j, "emails_endpoint");
  if (!c.is_oidc()) {
    c.token_endpoint_auth_method = str(j, "token_endpoint_auth_method");
    // Connections stored before the setting existed redeemed codes with client_secret_post.
    if (c.token_endpoint_auth_method.empty()) c.token_endpoint_auth_method = "client_secret_post";
  }
  const Json::Value& m = j.isObject() ? j["claim_mapping"] : Json::Value::nullSingleton();
  c.mapping.subject = str(m, "subject");
  c.mapping.email = str(m, "email");
  c.mapping.email_verified = str(m, "email_verified");
  c.mapping.given_name = str(m, "given_name");
  c.mapping.family_name = str(m, "family_name");
}

Json::Value to_json(const SocialConnection& c, const std::string& base_url) {
  Json::Value j = config_json(c);
  j["id"] = c.id;
  j["provider"] = c.provider;
  j["name"] = c.name;
  j["enabled"] = c.enabled;
  j["client_secret_set"] = c.has_client_secret;
  j["redirect_uri"] = base_url + "/sso/social/callback";
  j["create_time"] = c.create_time;
  j["update_time"] = c.update_time;
  // An empty mapping entry (GitHub has no family name) is left out: never an empty claim name.
  Json::Value m(Json::objectValue);
  for (const auto& key : j["claim_mapping"].getMemberNames()) {
    if (!j["claim_mapping"][key].asString().empty()) m[key] = j["claim_mapping"][key];
  }
  j["claim_mapping"] = m;
  return j;
}

}  // namespace portcullis::social
