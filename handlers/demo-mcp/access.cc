#include "access.h"

#include <strings.h>

#include "format/json.h"
#include "format/scope_list.h"
#include "jose/claims.h"
#include "jose/jwt.h"
#include "oauth/grants.h"
#include "oauth/uri.h"

namespace portcullis::demo_mcp {
namespace {

class KeyRingTokenCheck : public TokenCheck {
 public:
  explicit KeyRingTokenCheck(server::Services& services) : services_(services) {}

  Result<mcp::Caller> verify(std::string_view token, const oauth::Resource& resource,
                             int64_t now) override {
    (void)services_.keys.refresh_if_stale(now);
    if (!services_.keys.loaded()) return Status::unavailable("signing keys are not loaded yet");
    PORTCULLIS_ASSIGN_OR_RETURN(jose::DecodedJwt jwt,
                                jose::verify_jwt(token, [&](std::string_view kid) {
                                  return services_.keys.public_key(kid);
                                }));
    jose::ClaimChecks checks;
    checks.issuer = resource.issuer(services_.config);
    checks.audience = resource.server_url;
    checks.typ = "at+jwt";
    checks.now = now;
    PORTCULLIS_RETURN_IF_ERROR(jose::check_claims(jwt, checks));
    mcp::Caller caller;
    for (auto [name, field] :
         {std::pair{"sub", &caller.subject}, std::pair{"client_id", &caller.client_id},
          std::pair{"scope", &caller.scope}}) {
      const Json::Value* v = json::find_member(jwt.claims, name);
      if (!v || !v->isString()) {
        return Status::unauthenticated(std::string("the token has no ") + name + " claim");
      }
      *field = v->asString();
    }
    const Json::Value* jti = json::find_member(jwt.claims, "jti");
    if (!jti || !jti->isString()) return Status::unauthenticated("the token has no jti claim");
    PORTCULLIS_ASSIGN_OR_RETURN(
        bool revoked, oauth::GrantStore(services_.db).is_access_token_revoked(jti->asString()));
    if (revoked) return Status::unauthenticated("the token was revoked");
    caller.scopes = format::scope_set(caller.scope);
    return caller;
  }

 private:
  server::Services& services_;
};

// RFC 6750 §3: auth-param values are quoted strings; ours never hold '"' or '\' (URLs we
// built and scope tokens), but escape anyway so no value can end the string early.
std::string quoted(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

http::Response challenge(int status, std::string params, const Json::Value& body) {
  http::Response r = http::Response::json(status, body);
  r.set_header("WWW-Authenticate", "Bearer " + params);
  return r;
}

}  // namespace

std::unique_ptr<TokenCheck> key_ring_token_check(server::Services& services) {
  return std::make_unique<KeyRingTokenCheck>(services);
}

std::string protected_resource_metadata_url(std::string_view server_url) {
  auto parts = oauth::parse_uri(server_url);
  if (!parts || !parts->has_authority) return std::string(server_url);
  std::string path = parts->rest;
  if (!path.empty() && path.back() == '/') path.pop_back();
  std::string authority = parts->host + (parts->port.empty() ? "" : ":" + parts->port);
  return parts->scheme + "://" + authority + "/.well-known/oauth-protected-resource" + path;
}

Presented presented_token(const http::Request& request) {
  Presented p;
  auto header = request.header("authorization");
  if (!header) return p;
  p.kind = Presented::Kind::kNotBearer;
  // RFC 7235 §2.1: the scheme is case-insensitive; RFC 6750 §2.1: one space, then the token.
  constexpr std::string_view kScheme = "bearer ";
  if (header->size() < kScheme.size() ||
      strncasecmp(header->data(), kScheme.data(), kScheme.size()) != 0) {
    return p;
  }
  p.kind = Presented::Kind::kBearer;
  p.token = header->substr(kScheme.size());
  return p;
}

http::Response unauthorized(std::string_view metadata_url, std::string_view scope, bool token_sent,
                            std::string_view why) {
  std::string params = "resource_metadata=" + quoted(metadata_url);
  if (token_sent) params += ", error=\"invalid_token\"";
  if (!scope.empty()) params += ", scope=" + quoted(scope);
  Json::Value body(Json::objectValue);
  body["error"] = token_sent ? "invalid_token" : "unauthorized";
  body["error_description"] = std::string(why);
  return challenge(401, std::move(params), body);
}

http::Response insufficient_scope(std::string_view metadata_url, const oauth::Resource& resource,
                                  const mcp::Caller& caller, const std::string& required) {
  std::vector<std::string> wanted;
  for (const oauth::ScopeDef& s : resource.scopes) {
    if (s.name == required || caller.scopes.count(s.name) > 0) wanted.push_back(s.name);
  }
  if (resource.find_scope(required) == nullptr) wanted.push_back(required);
  Json::Value body(Json::objectValue);
  body["error"] = "insufficient_scope";
  body["error_description"] = "Required scope: " + required;
  return challenge(403,
                   "error=\"insufficient_scope\", scope=" + quoted(format::join_scopes(wanted)) +
                       ", resource_metadata=" + quoted(metadata_url),
                   body);
}

}  // namespace portcullis::demo_mcp
