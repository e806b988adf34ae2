#include "clients/client_metadata.h"

#include <algorithm>
#include <set>

#include "clients/redirect_uri.h"
#include "clients/uri.h"
#include "format/scope_list.h"
#include "format/text.h"
#include "management/scopes.h"

namespace portcullis::oauth {
namespace {

constexpr size_t kMaxUrlBytes = 2000;
constexpr size_t kMaxContactChars = 320;
constexpr size_t kMaxSoftwareChars = 200;
constexpr size_t kMaxScopeBytes = 2000;
constexpr size_t kMaxTypeEntries = 10;  // grant_types, response_types before deduplication

Status bad_metadata(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_client_metadata");
}

Status bad_redirect(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_redirect_uri");
}

// The string fields' shapes; how each field fails is the caller's (`fail`).
using Fail = Status (*)(std::string);

Result<std::string> read_string(const Json::Value& request, const char* field, Fail fail) {
  const Json::Value& v = request[field];
  if (v.isNull()) return std::string();
  if (!v.isString()) return fail(std::string(field) + " must be a string");
  return v.asString();
}

// An array of strings, repeats dropped (order kept), at most `max` entries as sent.
Result<std::vector<std::string>> read_strings(const Json::Value& request, const char* field,
                                              size_t max, Fail fail) {
  const Json::Value& v = request[field];
  std::vector<std::string> out;
  if (v.isNull()) return out;
  if (!v.isArray()) return fail(std::string(field) + " must be an array of strings");
  if (v.size() > max) {
    return fail(std::string(field) + " has more than " + std::to_string(max) + " entries");
  }
  for (const auto& item : v) {
    if (!item.isString()) return fail(std::string(field) + " must be an array of strings");
    if (std::find(out.begin(), out.end(), item.asString()) == out.end()) {
      out.push_back(item.asString());
    }
  }
  return out;
}

Status check_text(const std::string& value, const char* field, size_t max_chars) {
  if (auto problem = text::display_text_problem(value, max_chars)) {
    return bad_metadata(std::string(field) + " " + *problem);
  }
  return Status::ok();
}

// client_uri, logo_uri, tos_uri, policy_uri: pages a consent screen may link to or load, so
// https only, with a host and without credentials in them.
Status check_https_url(const std::string& value, const char* field) {
  if (value.empty()) return Status::ok();
  auto p = parse_uri(value);
  if (value.size() > kMaxUrlBytes || !text::is_printable_ascii(value) || !p ||
      p->scheme != "https" || !p->has_authority || p->host.empty() || p->has_userinfo) {
    return bad_metadata(std::string(field) + " must be an https URL with a host, at most " +
                        std::to_string(kMaxUrlBytes) + " bytes");
  }
  return Status::ok();
}

Status check_one_of(const std::string& value, const char* field,
                    std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (value == a) return Status::ok();
  }
  std::string list;
  for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  return bad_metadata(std::string(field) + " must be one of: " + list);
}

// The fields' shapes and sizes, without the rules that depend on the resource. `fail_redirect`
// lets the stored form reuse this with one error family.
Result<ClientMetadata> read_shapes(const Json::Value& request, Fail fail_redirect) {
  ClientMetadata m;
  PORTCULLIS_ASSIGN_OR_RETURN(
      m.redirect_uris, read_strings(request, "redirect_uris", kMaxRedirectUris, fail_redirect));
  PORTCULLIS_ASSIGN_OR_RETURN(std::string method,
                              read_string(request, "token_endpoint_auth_method", bad_metadata));
  if (!method.empty()) m.token_endpoint_auth_method = method;
  PORTCULLIS_ASSIGN_OR_RETURN(std::vector<std::string> grants,
                              read_strings(request, "grant_types", kMaxTypeEntries, bad_metadata));
  if (!request["grant_types"].isNull()) m.grant_types = grants;
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::vector<std::string> responses,
      read_strings(request, "response_types", kMaxTypeEntries, bad_metadata));
  if (!request["response_types"].isNull()) m.response_types = responses;
  PORTCULLIS_ASSIGN_OR_RETURN(std::string scope, read_string(request, "scope", bad_metadata));
  if (scope.size() > kMaxScopeBytes) {
    return bad_metadata("scope is longer than " + std::to_string(kMaxScopeBytes) + " bytes");
  }
  m.scope = format::join_scopes(format::scope_set(scope));
  PORTCULLIS_ASSIGN_OR_RETURN(m.client_name, read_string(request, "client_name", bad_metadata));
  PORTCULLIS_ASSIGN_OR_RETURN(m.client_uri, read_string(request, "client_uri", bad_metadata));
  PORTCULLIS_ASSIGN_OR_RETURN(m.logo_uri, read_string(request, "logo_uri", bad_metadata));
  PORTCULLIS_ASSIGN_OR_RETURN(m.tos_uri, read_string(request, "tos_uri", bad_metadata));
  PORTCULLIS_ASSIGN_OR_RETURN(m.policy_uri, read_string(request, "policy_uri", bad_metadata));
  PORTCULLIS_ASSIGN_OR_RETURN(m.contacts,
                              read_strings(request, "contacts", kMaxContacts, bad_metadata));
  PORTCULLIS_ASSIGN_OR_RETURN(m.software_id, read_string(request, "software_id", bad_metadata));
  PORTCULLIS_ASSIGN_OR_RETURN(m.software_version,
                              read_string(request, "software_version", bad_metadata));
  PORTCULLIS_ASSIGN_OR_RETURN(m.application_type,
                              read_string(request, "application_type", bad_metadata));
  return m;
}

void put_if_set(Json::Value& out, const char* field, const std::string& value) {
  if (!value.empty()) out[field] = value;
}

Json::Value array_of(const std::vector<std::string>& items) {
  Json::Value a(Json::arrayValue);
  for (const auto& i : items) a.append(i);
  return a;
}

}  // namespace

Result<ClientMetadata> parse_client_metadata(const Json::Value& request, const Resource& resource) {
  if (!request.isObject()) return bad_metadata("the registration request must be a JSON object");
  PORTCULLIS_ASSIGN_OR_RETURN(ClientMetadata m, read_shapes(request, bad_redirect));

  if (m.redirect_uris.empty()) return bad_redirect("redirect_uris must name at least one URI");
  for (size_t i = 0; i < m.redirect_uris.size(); ++i) {
    Status st = validate_redirect_uri(m.redirect_uris[i]);
    if (!st.is_ok()) {
      return bad_redirect("redirect_uris[" + std::to_string(i) + "]: " + st.message());
    }
  }
  PORTCULLIS_RETURN_IF_ERROR(check_one_of(m.token_endpoint_auth_method,
                                          "token_endpoint_auth_method",
                                          {"none", "client_secret_basic", "client_secret_post"}));
  for (const auto& g : m.grant_types) {
    PORTCULLIS_RETURN_IF_ERROR(
        check_one_of(g, "grant_types entries", {"authorization_code", "refresh_token"}));
  }
  // Codes are the only way in: a client without them could never obtain a first token.
  if (std::find(m.grant_types.begin(), m.grant_types.end(), "authorization_code") ==
      m.grant_types.end()) {
    return bad_metadata("grant_types must include authorization_code");
  }
  if (m.response_types != std::vector<std::string>{"code"}) {
    return bad_metadata("response_types must be [\"code\"]");
  }
  for (const auto& s : format::scope_set(m.scope)) {
    if (!resource.find_scope(s))
      return bad_metadata("scope " + s + " is not a scope of this resource");
  }
  PORTCULLIS_RETURN_IF_ERROR(check_text(m.client_name, "client_name", kMaxClientNameChars));
  PORTCULLIS_RETURN_IF_ERROR(check_https_url(m.client_uri, "client_uri"));
  PORTCULLIS_RETURN_IF_ERROR(check_https_url(m.logo_uri, "logo_uri"));
  PORTCULLIS_RETURN_IF_ERROR(check_https_url(m.tos_uri, "tos_uri"));
  PORTCULLIS_RETURN_IF_ERROR(check_https_url(m.policy_uri, "policy_uri"));
  for (const auto& c : m.contacts) {
    if (c.empty()) return bad_metadata("contacts entries must not be empty");
    PORTCULLIS_RETURN_IF_ERROR(check_text(c, "contacts entries", kMaxContactChars));
  }
  PORTCULLIS_RETURN_IF_ERROR(check_text(m.software_id, "software_id", kMaxSoftwareChars));
  PORTCULLIS_RETURN_IF_ERROR(check_text(m.software_version, "software_version", kMaxSoftwareChars));
  if (!m.application_type.empty()) {
    PORTCULLIS_RETURN_IF_ERROR(
        check_one_of(m.application_type, "application_type", {"web", "native"}));
  }
  return m;
}

Json::Value client_metadata_json(const ClientMetadata& m) {
  Json::Value out(Json::objectValue);
  out["redirect_uris"] = array_of(m.redirect_uris);
  out["token_endpoint_auth_method"] = m.token_endpoint_auth_method;
  out["grant_types"] = array_of(m.grant_types);
  out["response_types"] = array_of(m.response_types);
  put_if_set(out, "scope", m.scope);
  put_if_set(out, "client_name", m.client_name);
  put_if_set(out, "client_uri", m.client_uri);
  put_if_set(out, "logo_uri", m.logo_uri);
  put_if_set(out, "tos_uri", m.tos_uri);
  put_if_set(out, "policy_uri", m.policy_uri);
  if (!m.contacts.empty()) out["contacts"] = array_of(m.contacts);
  put_if_set(out, "software_id", m.software_id);
  put_if_set(out, "software_version", m.software_version);
  put_if_set(out, "application_type", m.application_type);
  return out;
}

Result<ClientMetadata> stored_client_metadata(const Json::Value& stored) {
  if (!stored.isObject()) return Status::internal("stored client metadata is corrupt");
  auto corrupt = [](std::string) { return Status::internal("stored client metadata is corrupt"); };
  auto m = read_shapes(stored, corrupt);
  if (!m) return Status::internal("stored client metadata is corrupt: " + m.status().message());
  return m;
}

}  // namespace portcullis::oauth
