// Who is calling the demo MCP server (contract §6): the Authorization header checked in-process
// by the validation library (lib/validation) against the worker's key ring, then the
// revocation deny-list (contract §5); refusals answered as seed §7 says.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include "http/request.h"
#include "http/response.h"
#include "mcp/server.h"
#include "oauth/resources.h"
#include "server/services.h"
#include "validation/verifier.h"

namespace portcullis::demo_mcp {

using Authenticated = std::variant<mcp::Caller, http::Response>;

class Access {
 public:
  explicit Access(server::Services& services);

  // The caller a live token for `resource` describes, or the refusal: 401 with
  // `WWW-Authenticate: Bearer [error="invalid_token", ]scope="<first_scope>",
  // resource_metadata="…"` (error= only when a token was sent), or 503 while the keys cannot be
  // loaded. `first_scope` is what a client should ask for first. An error Status when the
  // store cannot say whether the token was revoked.
  Result<Authenticated> authenticate(const http::Request& request, const oauth::Resource& resource,
                                     const std::string& first_scope, int64_t now);

 private:
  Result<std::shared_ptr<validation::Verifier>> verifier_for(const oauth::Resource& resource);

  server::Services& services_;
  std::shared_ptr<validation::KeySource> keys_;
  std::shared_ptr<validation::Verifier> verifier_;  // for the resource's current URL
};

// 403 for a valid token without `required`: the seed's exact body
// {"error":"insufficient_scope","error_description":"Required scope: <required>"} and
// `WWW-Authenticate: Bearer error="insufficient_scope", scope="…", resource_metadata="…"`
// whose scope lists the scopes the token holds of the resource plus the one it lacks (MCP
// 2025-11-25 "Scope Challenge Handling", recommended approach): a client that asks for exactly
// that keeps what it had and gains the missing scope.
http::Response insufficient_scope(const oauth::Resource& resource, const mcp::Caller& caller,
                                  const std::string& required);

}  // namespace portcullis::demo_mcp
