#include "cimd/document.h"

#include <json/value.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "clients/redirect_uri.h"
#include "format/json.h"
#include "format/utf8.h"

namespace portcullis::cimd {
namespace {

// Deep enough for any metadata (jwks nests four levels), shallow enough to stay cheap.
constexpr int kMaxDepth = 16;
constexpr size_t kMaxClientNameChars = 200;
constexpr size_t kMaxUriBytes = 2000;

class Checker {
 public:
  Checker(const ClientIdUrl& url, const Json::Value& doc) : url_(url), doc_(doc) {}

  Status invalid(const std::string& why) const {
    return invalid_client("The application's metadata document at " + url_.parsed.host +
                          " is not valid: " + why + ".");
  }

  const Json::Value* member(std::string_view key) const { return json::find_member(doc_, key); }

  // A member that must be a string when present; `out` is left empty when absent.
  Status optional_string(std::string_view key, std::optional<std::string>& out) const {
    const Json::Value* v = member(key);
    if (!v) return Status::ok();
    if (!v->isString()) return invalid("its " + std::string(key) + " is not a string");
    out = v->asString();
    if (!utf8::is_valid(*out)) return invalid("its " + std::string(key) + " is not UTF-8 text");
    return Status::ok();
  }

  // A member that must be an array of strings when present.
  Status optional_strings(std::string_view key,
                          std::optional<std::vector<std::string>>& out) const {
    const Json::Value* v = member(key);
    if (!v) return Status::ok();
    if (!v->isArray()) return invalid("its " + std::string(key) + " is not an array of strings");
    out.emplace();
    for (const Json::Value& item : *v) {
      if (!item.isString())
        return invalid("its " + std::string(key) + " is not an array of strings");
      out->push_back(item.asString());
      if (!utf8::is_valid(out->back())) {
        return invalid("its " + std::string(key) + " is not UTF-8 text");
      }
    }
    return Status::ok();
  }

 private:
  const ClientIdUrl& url_;
  const Json::Value& doc_;
};

bool contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool is_secret_method(std::string_view method) {
  return method.rfind("client_secret_", 0) == 0;
}

Status check_client_id(const Checker& c, const ClientIdUrl& url) {
  std::optional<std::string> id;
  PORTCULLIS_RETURN_IF_ERROR(c.optional_string("client_id", id));
  if (!id) return c.invalid("it has no client_id");
  if (*id == url.url) return Status::ok();
  if (url.parsed.path == kClientConfigurationPath && *id == url.parsed.origin()) {
    return Status::ok();
  }
  return c.invalid("its client_id is not the URL it was fetched from");
}

// Code points that would let a name rearrange or hide text around it on the consent page.
bool is_unsafe_in_name(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f || cp == 0x061c;
}

Result<std::string> check_client_name(const Checker& c) {
  std::optional<std::string> name;
  PORTCULLIS_RETURN_IF_ERROR(c.optional_string("client_name", name));
  if (!name) return c.invalid("it has no client_name");
  auto chars = utf8::decode(*name);  // valid: optional_string checked
  if (std::all_of(chars->begin(), chars->end(), [](char32_t cp) { return cp == ' '; })) {
    return c.invalid("its client_name is empty");
  }
  if (chars->size() > kMaxClientNameChars) {
    return c.invalid("its client_name is longer than " + std::to_string(kMaxClientNameChars) +
                     " characters");
  }
  if (std::any_of(chars->begin(), chars->end(), is_unsafe_in_name)) {
    return c.invalid("its client_name contains control characters");
  }
  return std::move(*name);
}

Result<std::vector<std::string>> check_redirect_uris(const Checker& c) {
  std::optional<std::vector<std::string>> uris;
  PORTCULLIS_RETURN_IF_ERROR(c.optional_strings("redirect_uris", uris));
  if (!uris || uris->empty()) return c.invalid("it has no redirect_uris");
  for (size_t i = 0; i < uris->size(); ++i) {
    if (Status st = oauth::validate_redirect_uri((*uris)[i]); !st.is_ok()) {
      return c.invalid("redirect_uris[" + std::to_string(i) + "] is not allowed (" + st.message() +
                       ")");
    }
  }
  return std::move(*uris);
}

// Portcullis offers CIMD clients `none` only (PKCE is what binds their codes).
Status check_auth_method(const Checker& c) {
  if (c.member("client_secret") || c.member("client_secret_expires_at")) {
    return c.invalid("it contains a client secret, which a published document must never hold");
  }
  std::optional<std::string> method;
  std::optional<std::vector<std::string>> choices;
  PORTCULLIS_RETURN_IF_ERROR(c.optional_string("token_endpoint_auth_method", method));
  PORTCULLIS_RETURN_IF_ERROR(c.optional_strings("token_endpoint_auth_methods_supported", choices));
  bool secret = (method && is_secret_method(*method)) ||
                (choices && std::any_of(choices->begin(), choices->end(), is_secret_method));
  if (secret) {
    return c.invalid("it names a shared-secret client authentication method (client_secret_*)");
  }
  if (choices) {
    if (contains(*choices, "none")) return Status::ok();
    return c.invalid(
        "none of its token_endpoint_auth_methods_supported is `none`, the only "
        "method this server offers such clients");
  }
  if (!method || *method == "none") return Status::ok();
  if (*method == "private_key_jwt") {
    return c.invalid(
        "it requires private_key_jwt client authentication, which this server "
        "does not support yet");
  }
  return c.invalid(
      "it requires a client authentication method other than `none`, which this "
      "server does not support");
}

Result<std::vector<std::string>> check_grant_types(const Checker& c) {
  std::optional<std::vector<std::string>> listed;
  PORTCULLIS_RETURN_IF_ERROR(c.optional_strings("grant_types", listed));
  if (!listed) return std::vector<std::string>{"authorization_code", "refresh_token"};
  if (!contains(*listed, "authorization_code")) {
    return c.invalid("its grant_types do not include authorization_code");
  }
  std::vector<std::string> granted{"authorization_code"};
  if (contains(*listed, "refresh_token")) granted.emplace_back("refresh_token");
  return granted;
}

Status check_response_types(const Checker& c) {
  std::optional<std::vector<std::string>> types;
  PORTCULLIS_RETURN_IF_ERROR(c.optional_strings("response_types", types));
  if (types && !contains(*types, "code")) {
    return c.invalid("its response_types do not include code");
  }
  return Status::ok();
}

// Display-only links: kept when they are https URLs, dropped (never an error) otherwise.
std::string https_link(const Checker& c, std::string_view key) {
  const Json::Value* v = c.member(key);
  if (!v || !v->isString()) return "";
  std::string link = v->asString();
  if (link.size() > kMaxUriBytes || !outbound::parse_https_url(link).is_ok()) return "";
  return link;
}

}  // namespace

Result<oauth::ClientInfo> validate_document(const ClientIdUrl& url, std::string_view body) {
  const Json::Value no_document;
  const Checker outer(url, no_document);
  if (body.size() > kMaxDocumentBytes) {
    return outer.invalid("it is larger than " + std::to_string(kMaxDocumentBytes) + " bytes");
  }
  constexpr std::string_view kBom = "\xef\xbb\xbf";
  if (body.substr(0, kBom.size()) == kBom) body.remove_prefix(kBom.size());
  if (!utf8::is_valid(body)) return outer.invalid("it is not UTF-8 text");
  auto parsed = json::parse(body, kMaxDepth);
  if (!parsed) return outer.invalid("it is not valid JSON");
  if (!parsed->isObject()) return outer.invalid("it is not a JSON object");

  const Checker c(url, *parsed);
  PORTCULLIS_RETURN_IF_ERROR(check_client_id(c, url));
  PORTCULLIS_ASSIGN_OR_RETURN(std::string name, check_client_name(c));
  PORTCULLIS_ASSIGN_OR_RETURN(std::vector<std::string> redirect_uris, check_redirect_uris(c));
  PORTCULLIS_RETURN_IF_ERROR(check_auth_method(c));
  PORTCULLIS_ASSIGN_OR_RETURN(std::vector<std::string> grant_types, check_grant_types(c));
  PORTCULLIS_RETURN_IF_ERROR(check_response_types(c));

  oauth::ClientInfo info;
  info.kind = oauth::ClientInfo::Kind::kCimd;
  info.client_id = url.url;
  info.client_name = std::move(name);
  info.redirect_uris = std::move(redirect_uris);
  info.token_endpoint_auth_method = "none";
  info.grant_types = std::move(grant_types);
  info.client_uri = https_link(c, "client_uri");
  info.logo_uri = https_link(c, "logo_uri");
  return info;
}

}  // namespace portcullis::cimd
