// portcullis-wellknown: discovery documents, the JWKS, and health checks. Everything here is
// public, cacheable by design and read-only.
#include <optional>

#include "core/time.h"
#include "discovery/documents.h"
#include "discovery/metadata.h"
#include "format/json.h"
#include "http/document.h"
#include "metrics/route.h"
#include "server/worker_main.h"
#include "tokens/access_token.h"
#include "validator.h"

namespace portcullis {
namespace {

using server::Context;
using server::Route;

Result<http::Response> healthz(Context&) {
  Json::Value body(Json::objectValue);
  body["status"] = "ok";
  return http::Response::json(200, body);
}

// Ready = the database answers and a signing key is loaded for every algorithm a token may
// need (RS256, and each resource's access_token_signing_alg): what no request can succeed
// without. checks.signing_keys names each algorithm; checks.signing_key sums them up.
Result<http::Response> readyz(Context& ctx) {
  int64_t now = unix_now();
  Status db = ctx.services.db.ping();
  if (db.is_ok()) (void)ctx.services.keys.refresh_if_stale(now);
  std::vector<oauth::RequiredSigner> required;
  if (db.is_ok()) {
    auto r = oauth::required_signers(ctx.services.db, ctx.services.keys, now);
    if (r.is_ok()) required = std::move(r).value();
    if (!r.is_ok()) db = r.status();
  }
  // Without the database the resources' algorithms are unknown: RS256 is always needed.
  if (!db.is_ok()) required = {{jose::JwsAlg::kRS256, 0, ctx.services.keys.signer(now)}};
  Json::Value signers(Json::objectValue);
  bool keys = true;
  for (const oauth::RequiredSigner& s : required) {
    signers[std::string(jose::alg_name(s.alg))] = s.key ? "ok" : "missing";
    keys = keys && s.key != nullptr;
  }
  Json::Value body(Json::objectValue);
  body["status"] = db.is_ok() && keys ? "ready" : "unavailable";
  body["checks"]["database"] = db.is_ok() ? "ok" : "unavailable";
  body["checks"]["signing_key"] = keys ? "ok" : "missing";
  body["checks"]["signing_keys"] = signers;
  http::Response r = http::Response::json(db.is_ok() && keys ? 200 : 503, body);
  if (r.status == 503) r.set_header("Retry-After", "1");
  return r;
}

// The documents of this worker (install_routes runs after the fork): rendered once per change
// and served from memory with an ETag (http/document.h).
struct Documents {
  http::DocumentMemo jwks;
  std::optional<http::Document> environment;
  discovery::ResourceDocuments resources;
};
Documents& documents() {
  static Documents d;
  return d;
}

Result<http::Response> jwks(Context& ctx) {
  int64_t now = unix_now();
  Status refreshed = ctx.services.keys.refresh_if_stale(now);
  if (!ctx.services.keys.loaded()) return refreshed;
  // Bounded by the pre-publication window (config), so a cached set always holds the signer.
  return http::serve_document(
      ctx.request,
      documents().jwks.get(ctx.services.keys.jwks_json(now), "application/jwk-set+json"),
      "public, max-age=" + std::to_string(ctx.services.config.jwks_max_age_seconds));
}

// From config only: the same for the life of the process.
Result<http::Response> environment_metadata(Context& ctx) {
  std::optional<http::Document>& document = documents().environment;
  if (!document) {
    document = http::make_document(
        json::write(discovery::environment_metadata(ctx.services.config)), "application/json");
  }
  return http::serve_document(ctx.request, *document, "public, max-age=300");
}

// OpenID Connect Discovery 1.0 §3 requires authorization_endpoint, which the environment
// issuer does not have (it issues management tokens through client_credentials only): no
// complete document exists for it, so there is none (contract §1). OIDC clients use a
// resource's issuer, whose document is complete.
Result<http::Response> environment_openid(Context&) {
  return Status::not_found(
      "the environment issuer has no OpenID configuration (it has no authorization endpoint); "
      "use a resource's issuer: /.well-known/openid-configuration/resources/{resource_id}");
}

// The four URLs of contract §1 serve one document per resource: RFC 8414's path insertion and
// the appended form some clients use, each in its OAuth and its OpenID flavour.
Result<http::Response> resource_document(Context& ctx, bool openid) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      const discovery::ResourceDocuments::Entry* entry,
      documents().resources.get(ctx.services.db, ctx.services.config,
                                ctx.request.path_param("resource_id"), monotonic_ms()));
  // no-cache: a cache may keep it, but asks again (If-None-Match, a 304) before each use, so a
  // changed resource shows as soon as the worker has re-read it (at most a second) and the
  // node's nginx has let its copy go (at most 2 s more: nginx/portcullis/document-cache.conf).
  return http::serve_document(ctx.request, openid ? entry->openid : entry->oauth,
                              "public, no-cache");
}

Result<http::Response> resource_metadata(Context& ctx) {
  return resource_document(ctx, false);
}
Result<http::Response> resource_openid(Context& ctx) {
  return resource_document(ctx, true);
}

void install_routes(server::App& app) {
  wellknown::install_validator_routes(app);
  metrics::install_route(app);
  app.add("GET", "/healthz", Route{healthz});
  app.add("GET", "/readyz", Route{readyz});
  app.add("GET", "/keys", Route{.handler = jwks, .cors = true});
  app.add("GET", "/.well-known/oauth-authorization-server",
          Route{.handler = environment_metadata, .cors = true});
  app.add("GET", "/.well-known/openid-configuration",
          Route{.handler = environment_openid, .cors = true});
  for (const char* pattern : {"/.well-known/oauth-authorization-server/resources/{resource_id}",
                              "/resources/{resource_id}/.well-known/oauth-authorization-server"}) {
    app.add("GET", pattern, Route{.handler = resource_metadata, .cors = true});
  }
  for (const char* pattern : {"/.well-known/openid-configuration/resources/{resource_id}",
                              "/resources/{resource_id}/.well-known/openid-configuration"}) {
    app.add("GET", pattern, Route{.handler = resource_openid, .cors = true});
  }
}

}  // namespace
}  // namespace portcullis

int main(int argc, char** argv) {
  return portcullis::server::worker_main(
      argc, argv,
      {"wellknown", portcullis::http::Family::kOAuth, portcullis::install_routes,
       &portcullis::config::Config::wellknown_workers});
}
