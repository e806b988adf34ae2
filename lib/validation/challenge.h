// The responses a protected MCP server gives a refused request (contract §6, seed §7), built in
// one place for the library's users (the demo MCP server, the nginx validator, docs):
//
//   401  WWW-Authenticate: Bearer [error="invalid_token", ][scope="<required>",
//   ]resource_metadata="<PRM URL>"
//        (error= only when a token was sent; scope= only when the request needs scopes)
//   403  WWW-Authenticate: Bearer error="insufficient_scope", scope="<missing>",
//   resource_metadata="<PRM URL>"
//        body {"error":"insufficient_scope","error_description":"Required scope: <missing>"}
//   401  for a DPoP refusal (RFC 9449 §7.1): WWW-Authenticate: DPoP error="invalid_dpop_proof"
//        (or "invalid_token"), error_description="…", algs="ES256 RS256 EdDSA",
//        resource_metadata="<PRM URL>"
//   503  the keys could not be loaded: Retry-After, nothing else to say
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "http/response.h"
#include "validation/verdict.h"

namespace portcullis::validation {

// RFC 9728 §3.1: the protected resource metadata URL of a server URL — the well-known segment
// inserted between the origin and the path, a terminating slash dropped:
// "https://mcp.example.com/mcp" →
// "https://mcp.example.com/.well-known/oauth-protected-resource/mcp".
std::string protected_resource_metadata_url(std::string_view server_url);

// The absolute URL a request was made to, for DPoP's htu (RFC 9449 §4.3): the origin (scheme,
// host, port) of the configured server URL, never the client's Host header, followed by the
// request target as nginx received it ($request_uri). A target that is itself an absolute URL
// contributes its path only. "https://mcp.example.com/mcp", "/mcp?x=1" →
// "https://mcp.example.com/mcp?x=1" (htu comparison then drops the query).
std::string request_url(std::string_view server_url, std::string_view request_target);

// The WWW-Authenticate value for a refusal; "" for kValid and kUnavailable. `required_scopes`
// is what the request needed (the 401's scope=); a 403 names verdict.missing_scope.
std::string www_authenticate(const Verdict& verdict, std::string_view resource_metadata_url,
                             std::string_view required_scopes);

// {"error":"insufficient_scope","error_description":"Required scope: <scope>"}
std::string insufficient_scope_body(std::string_view scope);

// The whole response for a refusal: status, WWW-Authenticate, the 403 body (401s carry a small
// OAuth-shaped body too), Cache-Control: no-store. REQUIRES: !verdict.valid().
http::Response challenge_response(const Verdict& verdict, std::string_view resource_metadata_url,
                                  const std::vector<std::string>& required_scopes);

}  // namespace portcullis::validation
