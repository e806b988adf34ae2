// How the demo MCP server decides who is calling (contract §6): the bearer token of the
// Authorization header, checked in-process, and the 401/403 answers of seed §7 with the
// challenges MCP clients follow.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "http/request.h"
#include "http/response.h"
#include "mcp/server.h"
#include "oauth/resources.h"
#include "server/services.h"

namespace portcullis::demo_mcp {

// Checks one access token for one resource. Implementations answer Unauthenticated (the
// message says which rule failed; it never quotes the token) for anything but a live token
// issued for the resource, and Unavailable when they cannot tell right now.
class TokenCheck {
 public:
  virtual ~TokenCheck() = default;
  virtual Result<mcp::Caller> verify(std::string_view token, const oauth::Resource& resource,
                                     int64_t now) = 0;
};

// The worker's own check: signature against the key ring (the keys /keys publishes), then
// RFC 9068 claims (typ at+jwt, iss the resource's issuer, aud its server URL, exp/nbf with
// 60 s leeway), then the revocation deny-list (contract §5).
std::unique_ptr<TokenCheck> key_ring_token_check(server::Services& services);

// RFC 9728 §3.1: the metadata URL of a server URL, "/.well-known/oauth-protected-resource"
// inserted between its origin and its path ("http://h:8081/mcp" →
// "http://h:8081/.well-known/oauth-protected-resource/mcp").
std::string protected_resource_metadata_url(std::string_view server_url);

// The outcome of reading the Authorization header.
struct Presented {
  enum class Kind { kNone, kNotBearer, kBearer };
  Kind kind = Kind::kNone;
  std::string token;  // kBearer only
};
Presented presented_token(const http::Request& request);

// 401: `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`, with
// `error="invalid_token"` when a bearer token was sent (RFC 6750 §3.1: none when the request
// carried no credentials of this scheme). `scope` is what a client should ask for first.
http::Response unauthorized(std::string_view metadata_url, std::string_view scope, bool token_sent,
                            std::string_view why);

// 403 for a valid token without `required`: the seed's exact body
// {"error":"insufficient_scope","error_description":"Required scope: <required>"} and
// `WWW-Authenticate: Bearer error="insufficient_scope", scope="…", resource_metadata="…"`
// whose scope lists the scopes the token holds of the resource plus the one it lacks (MCP
// 2025-11-25 "Scope Challenge Handling", recommended approach: a client that asks for exactly
// that keeps what it had and gains the missing scope).
http::Response insufficient_scope(std::string_view metadata_url, const oauth::Resource& resource,
                                  const mcp::Caller& caller, const std::string& required);

}  // namespace portcullis::demo_mcp
