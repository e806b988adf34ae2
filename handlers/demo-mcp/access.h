// Who is calling the demo MCP server, and may they (contract §6): the validation library
// (lib/validation) in-process, as the nginx validator uses it — the verifier over the worker's
// key ring with a token cache, the revocation deny-list (contract §5), and token.validated /
// token.validation_failed events (contract §11), counted and written in batches.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clients/resources.h"
#include "core/status.h"
#include "http/response.h"
#include "mcp/server.h"
#include "server/app.h"
#include "validation/deny_list.h"
#include "validation/token_cache.h"
#include "validation/validation_events.h"
#include "validation/verifier.h"

namespace portcullis::demo_mcp {

class Access {
 public:
  explicit Access(server::Services& services);

  // Signature, claims and the deny-list for the request's Authorization header: kValid with
  // the claims, or the refusal. Scopes are not checked here (see check_scopes).
  Result<validation::Verdict> authenticate(server::Context& ctx, const oauth::Resource& resource,
                                           int64_t now);

  // Records the final verdict of a request that needed `required` scopes (the access log).
  void record(server::Context& ctx, const validation::Verdict& verdict,
              const oauth::Resource& resource, const std::vector<std::string>& required);

 private:
  Result<validation::Verifier*> verifier_for(const oauth::Resource& resource);

  server::Services& services_;
  std::shared_ptr<validation::KeySource> keys_;
  std::shared_ptr<const validation::ProofChecker> proofs_;
  std::shared_ptr<validation::Verifier> verifier_;  // for the resource's current URL
  std::unique_ptr<validation::TokenCache> cache_;   // tokens verified for verifier_
  validation::DenyList deny_list_;
  validation::ValidationEvents events_;
  std::string revoked_;  // the failure reason of the verdict last refused for revocation
};

// The refusal of contract §6 for a verdict that is not kValid: 401 with
// `WWW-Authenticate: Bearer [error="invalid_token", ]scope="<first_scope>",
// resource_metadata="…"` (error= only when a token was sent; first_scope is what a client
// should ask for first), 503 while the keys cannot be loaded, and for kInsufficientScope the
// seed's exact body {"error":"insufficient_scope","error_description":"Required scope: <missing>"}
// with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…", resource_metadata="…"`
// whose scope lists the resource's scopes the token holds plus the missing ones (MCP 2025-11-25
// "Scope Challenge Handling", recommended approach): a client that asks for exactly that keeps
// what it had and gains what it lacked.
http::Response refusal(const validation::Verdict& verdict, const oauth::Resource& resource,
                       const std::string& first_scope);

// The caller a kValid verdict describes.
mcp::Caller caller_of(const validation::Verdict& verdict);

}  // namespace portcullis::demo_mcp
