// The nginx auth_request validator and the protected-resource metadata it serves for MCP servers
// behind nginx (contract §6; nginx/portcullis/mcp-*.conf; docs/protecting-mcp-servers.md).
//
//   GET /__portcullis/validate           nginx's auth_request subrequest, per request to a
//                                        protected location. FastCGI parameters (set by the
//                                        snippet): PORTCULLIS_RESOURCE_ID,
//                                        PORTCULLIS_REQUIRED_SCOPES (space-separated),
//                                        PORTCULLIS_ORIGINAL_METHOD and PORTCULLIS_ORIGINAL_URI
//                                        ($request_uri; for DPoP's htm and htu, which is the
//                                        resource's configured origin + that target, never the
//                                        Host header; an older snippet's absolute
//                                        PORTCULLIS_ORIGINAL_URL gives its path only).
//       204  X-Portcullis-Sub, -Client-Id, -Scope, -Org-Id (when set), -Email (when set),
//            -Token-Type: nginx passes them upstream.
//       401  WWW-Authenticate of contract §6 (nginx forwards it); for a DPoP-bound token
//            without the DPoP scheme or a fresh, matching proof, a DPoP challenge (RFC 9449
//            §7.1) with error="invalid_token" or "invalid_dpop_proof" and resource_metadata.
//       403  WWW-Authenticate and X-Portcullis-Missing-Scope (the snippet writes the seed's body).
//       503  the keys cannot be loaded; 500 the location names no existing resource.
//       A CORS preflight (original method OPTIONS) gets 204 without identity headers.
//   GET /__portcullis/protected-resource-metadata   RFC 9728 document of PORTCULLIS_RESOURCE_ID.
//
// Per worker: verified tokens cached until expiry (validation/token_cache.h), the revocation
// deny-list re-read every PORTCULLIS_VALIDATOR_DENYLIST_SYNC_MS, events batched every
// PORTCULLIS_VALIDATOR_EVENT_FLUSH_MS, no access-log line per request.
#pragma once

#include "server/app.h"

namespace portcullis::wellknown {

void install_validator_routes(server::App& app);

}  // namespace portcullis::wellknown
