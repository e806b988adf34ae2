// portcullis-wellknown: discovery documents, the JWKS, and health checks. Everything here is
// public, cacheable by design and read-only.
#include "core/time.h"
#include "discovery/metadata.h"
#include "format/json.h"
#include "server/worker_main.h"

namespace portcullis {
namespace {

using server::Context;
using server::Route;

Result<http::Response> healthz(Context&) {
  Json::Value body(Json::objectValue);
  body["status"] = "ok";
  return http::Response::json(200, body);
}

// Ready = the database answers and a signing key is loaded: the two things no request can
// succeed without.
Result<http::Response> readyz(Context& ctx) {
  int64_t now = unix_now();
  Status db = ctx.services.db.ping();
  if (db.is_ok()) (void)ctx.services.keys.refresh_if_stale(now);
  bool keys = ctx.services.keys.signer(now) != nullptr;
  Json::Value body(Json::objectValue);
  body["status"] = db.is_ok() && keys ? "ready" : "unavailable";
  body["checks"]["database"] = db.is_ok() ? "ok" : "unavailable";
  body["checks"]["signing_key"] = keys ? "ok" : "missing";
  http::Response r = http::Response::json(db.is_ok() && keys ? 200 : 503, body);
  if (r.status == 503) r.set_header("Retry-After", "1");
  return r;
}

Result<http::Response> jwks(Context& ctx) {
  int64_t now = unix_now();
  Status refreshed = ctx.services.keys.refresh_if_stale(now);
  if (!ctx.services.keys.loaded()) return refreshed;
  http::Response r =
      http::Response::text(200, ctx.services.keys.jwks_json(now), "application/jwk-set+json");
  // Bounded by the pre-publication window (config), so a cached set always holds the signer.
  r.set_header("Cache-Control",
               "public, max-age=" + std::to_string(ctx.services.config.jwks_max_age_seconds));
  return r;
}

Result<http::Response> environment_metadata(Context& ctx) {
  return http::Response::json(200, discovery::environment_metadata(ctx.services.config));
}

Result<http::Response> environment_openid(Context& ctx) {
  return http::Response::json(200,
                              discovery::environment_openid_configuration(ctx.services.config));
}

void install_routes(server::App& app) {
  app.add("GET", "/healthz", Route{healthz});
  app.add("GET", "/readyz", Route{readyz});
  app.add("GET", "/keys", Route{.handler = jwks, .cors = true});
  app.add("GET", "/.well-known/oauth-authorization-server",
          Route{.handler = environment_metadata, .cors = true});
  app.add("GET", "/.well-known/openid-configuration",
          Route{.handler = environment_openid, .cors = true});
}

}  // namespace
}  // namespace portcullis

int main(int argc, char** argv) {
  return portcullis::server::worker_main(
      argc, argv, {"wellknown", portcullis::http::Family::kOAuth, portcullis::install_routes});
}
