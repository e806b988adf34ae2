// portcullis-demo-mcp: the demo MCP server of contract §12, a real MCP server over streamable
// HTTP at /mcp, protected in-process as contract §6 says. It serves the resource
// PORTCULLIS_DEMO_RESOURCE_ID: that resource's server URL is this server's URL (and so the
// audience its tokens must carry), its issuer the one tokens must come from.
//
//   POST /mcp                                      JSON-RPC (needs a token; tools need scopes)
//   GET|DELETE /mcp                                405: no SSE stream, no sessions
//   GET /.well-known/oauth-protected-resource[/mcp]  RFC 9728 metadata, no token
#include <cstdlib>
#include <memory>

#include "access.h"
#include "clients/resources.h"
#include "core/time.h"
#include "discovery/metadata.h"
#include "log/log.h"
#include "mcp/origin.h"
#include "mcp/server.h"
#include "server/worker_main.h"
#include "tools.h"
#include "validation/challenge.h"

namespace portcullis::demo_mcp {
namespace {

using server::Context;
using server::Route;

// The resource is read from the store and kept this long, so a PATCH (new scopes, another
// name) reaches the server without a restart.
constexpr int64_t kResourceCacheSeconds = 30;

class DemoServer {
 public:
  explicit DemoServer(server::Services& services)
      : services_(services),
        mcp_({.name = "portcullis-demo-mcp",
              .title = "Portcullis demo MCP server",
              .version = "1.0.0",
              .instructions = "Call whoami to see who you are signed in as (needs demo:read), "
                              "write_note to save a note (needs demo:write)."},
             demo_tools(services)),
        access_(services) {}

  Result<http::Response> post(Context& ctx) {
    int64_t now = unix_now();
    PORTCULLIS_ASSIGN_OR_RETURN(const oauth::Resource* resource, current_resource(now));
    // DNS-rebinding protection comes before anything else looks at the request.
    if (!mcp::origin_allowed(ctx.request.header("origin"), resource->server_url)) {
      return mcp::rpc_error_response(403, mcp::kInvalidRequest, "Origin is not allowed");
    }
    PORTCULLIS_ASSIGN_OR_RETURN(validation::Verdict verdict,
                                access_.authenticate(ctx, *resource, now));
    if (!verdict.valid()) {
      access_.record(ctx, verdict, *resource, {kReadScope});
      return refusal(verdict, *resource, kReadScope);
    }
    auto post = mcp_.read_post(ctx.request);
    if (auto* refused = std::get_if<http::Response>(&post)) {
      access_.record(ctx, verdict, *resource, {});
      return std::move(*refused);
    }
    const mcp::Post& messages = std::get<mcp::Post>(post);
    const std::vector<std::string> required = mcp_.required_scopes(messages);
    verdict = validation::Verifier::check_scopes(std::move(verdict), required);
    access_.record(ctx, verdict, *resource, required);
    if (!verdict.valid()) return refusal(verdict, *resource, kReadScope);
    return mcp_.answer(messages, caller_of(verdict));
  }

  // The metadata of RFC 9728 at the root form and at the form with the server URL's path.
  Result<http::Response> metadata(Context& ctx) {
    PORTCULLIS_ASSIGN_OR_RETURN(const oauth::Resource* resource, current_resource(unix_now()));
    if (ctx.request.path != "/.well-known/oauth-protected-resource" &&
        !validation::protected_resource_metadata_url(resource->server_url)
             .ends_with(ctx.request.path)) {
      return Status::not_found("no protected resource metadata at this path");
    }
    http::Response r = http::Response::json(
        200, discovery::protected_resource_metadata(services_.config, *resource));
    r.set_header("Cache-Control", "public, max-age=" + std::to_string(kResourceCacheSeconds));
    return r;
  }

 private:
  Result<const oauth::Resource*> current_resource(int64_t now) {
    if (!resource_ || now >= loaded_at_ + kResourceCacheSeconds) {
      auto fresh = oauth::ResourceStore(services_.db).get(services_.config.demo_resource_id);
      if (fresh) {
        resource_ = std::move(fresh).value();
        loaded_at_ = now;
      } else if (!resource_ || fresh.status().code() == Code::kNotFound) {
        // A deleted resource stops the server; a store outage keeps the last copy in use.
        resource_.reset();
        return fresh.status().code() == Code::kNotFound
                   ? Status::unavailable("the demo resource " + services_.config.demo_resource_id +
                                         " does not exist")
                   : fresh.status();
      }
    }
    return &*resource_;
  }

  server::Services& services_;
  mcp::Server mcp_;
  Access access_;
  std::optional<oauth::Resource> resource_;
  int64_t loaded_at_ = 0;
};

void install_routes(server::App& app) {
  if (app.services().config.demo_resource_id.empty()) {
    log::error("PORTCULLIS_DEMO_RESOURCE_ID is not set: the demo server has no resource to serve");
    std::exit(2);
  }
  // One per worker process, like the App that holds the routes.
  static std::unique_ptr<DemoServer> demo;
  demo = std::make_unique<DemoServer>(app.services());
  app.add("POST", "/mcp", Route{[](Context& ctx) { return demo->post(ctx); }});
  for (const char* path :
       {"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/{path}"}) {
    app.add("GET", path,
            Route{.handler = [](Context& ctx) { return demo->metadata(ctx); }, .cors = true});
  }
}

}  // namespace
}  // namespace portcullis::demo_mcp

int main(int argc, char** argv) {
  return portcullis::server::worker_main(
      argc, argv,
      {"demo-mcp", portcullis::http::Family::kOAuth, portcullis::demo_mcp::install_routes});
}
