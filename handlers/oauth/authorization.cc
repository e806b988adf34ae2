#include "authorization.h"

#include <algorithm>
#include <set>

#include "admin/portal_signin.h"
#include "clients/redirect_uri.h"
#include "clients/resources.h"
#include "core/ids.h"
#include "core/time.h"
#include "crypto/base64.h"
#include "crypto/hash.h"
#include "format/scope_list.h"
#include "http/request.h"
#include "identity/session_store.h"
#include "oauth/client_resolver.h"
#include "oauth/login_requests.h"
#include "oauth/pkce.h"
#include "oauth/signin_organization.h"
#include "pages/error_page.h"
#include "tokens/codes.h"
#include "tokens/consents.h"
#include "tokens/sealed_code.h"

namespace portcullis::oauth {
namespace {

// A URI with parameters appended, keeping any query it already has.
std::string with_params(const std::string& uri,
                        const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out = uri;
  char sep = uri.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [k, v] : params) {
    if (v.empty() && k == "state") continue;  // no empty state when the client sent none
    out += sep;
    out += http::url_encode(k) + "=" + http::url_encode(v);
    sep = '&';
  }
  return out;
}

// grants.scope is VARCHAR(2000) (sql/0002_oauth.sql).
constexpr size_t kMaxScopeChars = 2000;

http::Response redirect_error(const std::string& redirect_uri, const std::string& error,
                              const std::string& description, const std::string& state,
                              const std::string& issuer) {
  return http::Response::see_other(with_params(
      redirect_uri,
      {{"error", error}, {"error_description", description}, {"state", state}, {"iss", issuer}}));
}

http::Response bad_request_page(const std::string& message) {
  return pages::error_page(400, "This sign-in request cannot continue", message);
}

// base64url of a SHA-256 digest (RFC 7638), as dpop_jkt carries it (RFC 9449 §10).
bool is_jwk_thumbprint(const std::string& value) {
  const std::optional<std::string> digest = crypto::base64url_decode(value);
  return digest && digest->size() == crypto::kSha256Bytes;
}

bool prompt_has(const std::string& prompt, std::string_view value) {
  for (const auto& p : format::scope_list(prompt)) {
    if (p == value) return true;
  }
  return false;
}

// Finds the resource a CIMD client names with `resource`.
Result<Resource> resource_for_indicator(store::Db& db, const std::string& indicator) {
  ResourceStore resources(db);
  return resources.find_by_server_url(indicator);
}

class AuthorizationFlow final : public LoginFlow {
 public:
  explicit AuthorizationFlow(server::Services& services) : services_(services) {}

  Result<LoginRequest> get(const std::string& id, int64_t now) override {
    LoginRequestStore store(services_.db);
    return store.get(id, now);
  }

  Status attach_user(const std::string& id, const std::string& user_id, int64_t auth_time,
                     const std::string& signin_organization_id) override {
    LoginRequestStore store(services_.db);
    return store.attach_user(id, user_id, auth_time, signin_organization_id);
  }

  Result<pages::ConsentScreen> describe_consent(const LoginRequest& request) override {
    if (is_portal(request)) {
      // The admin portal (admin/portal_signin.h) signs in on its own server: no resource.
      pages::ConsentScreen screen;
      screen.resource_name = std::string(admin::kPortalName);
      screen.client_name = std::string(admin::kPortalName);
      screen.client_host = uri_host(request.redirect_uri);
      screen.redirect_host = screen.client_host;
      return screen;
    }
    ResourceStore resources(services_.db);
    PORTCULLIS_ASSIGN_OR_RETURN(Resource resource, resources.get(request.resource_id));
    PORTCULLIS_ASSIGN_OR_RETURN(ClientInfo client,
                                resolve_client(services_, request.client_id, unix_now()));
    pages::ConsentScreen screen;
    screen.resource_name = resource.name;
    screen.client_is_cimd = client.kind == ClientInfo::Kind::kCimd;
    screen.client_host =
        screen.client_is_cimd ? uri_host(client.client_id) : uri_host(client.client_uri);
    screen.client_name = client.client_name.empty() ? client.client_id : client.client_name;
    screen.redirect_host = uri_host(request.redirect_uri);
    screen.redirect_is_localhost = is_loopback_redirect(request.redirect_uri);
    for (const auto& name : request.scopes) {
      pages::ConsentScreen::Scope s{name, ""};
      for (const auto& def : resource.scopes) {
        if (def.name == name) s.description = def.description;
      }
      screen.scopes.push_back(std::move(s));
    }
    return screen;
  }

  Result<http::Response> continue_after_sign_in(server::Context& ctx,
                                                const LoginRequest& request) override {
    if (request.user_id.empty()) return Status::failed_precondition("nobody has signed in yet");
    PORTCULLIS_ASSIGN_OR_RETURN(bool ask, must_ask_consent(request));
    if (!ask) return issue_code_and_redirect(ctx, request);
    if (prompt_has(request.prompt, "none")) {
      PORTCULLIS_RETURN_IF_ERROR(LoginRequestStore(services_.db).complete(request.id, unix_now()));
      return consent_required(request);
    }
    return consent_page(request);
  }

  // The authorization request of a browser that is already signed in (authorize()), not yet
  // stored. Stored only if it has to wait for the user's consent: with a remembered consent
  // that covers it the code is issued at once, and prompt=none without one fails at once, so
  // neither writes a login request nobody would come back for (two round trips fewer).
  // `consented_scopes`: the user's remembered consent for the request's client and resource,
  // as read with the session (oauth::resolve_client_and_resource, or
  // identity::SessionStore::current for a CIMD client), nullopt when none.
  Result<http::Response> continue_signed_in(LoginRequest& request,
                                            const std::optional<std::string>& consented_scopes) {
    PORTCULLIS_ASSIGN_OR_RETURN(bool ask, must_ask_consent(request, &consented_scopes));
    if (!ask) return issue_code(request, unix_now());
    if (prompt_has(request.prompt, "none")) return consent_required(request);
    PORTCULLIS_RETURN_IF_ERROR(LoginRequestStore(services_.db).create(request, unix_now()));
    return consent_page(request);
  }

  Result<http::Response> finish_with_consent(server::Context& ctx, const LoginRequest& request,
                                             bool allow) override {
    if (request.user_id.empty()) return Status::failed_precondition("nobody has signed in yet");
    if (is_portal(request)) return continue_after_sign_in(ctx, request);
    if (!allow) {
      events::Event e = ctx.event(events::type::kConsentDenied);
      e.user_id = request.user_id;
      e.client_id = request.client_id;
      e.resource_id = request.resource_id;
      PORTCULLIS_RETURN_IF_ERROR(ctx.change_with_event(
          [&] { return LoginRequestStore(services_.db).complete(request.id, unix_now()); },
          std::move(e)));
      return redirect_error(request.redirect_uri, "access_denied", "the user denied access",
                            request.state, issuer_of(request));
    }
    ConsentStore consents(services_.db);
    events::Event e = ctx.event(events::type::kConsentGranted);
    e.user_id = request.user_id;
    e.client_id = request.client_id;
    e.resource_id = request.resource_id;
    e.data["scopes"] = Json::Value(Json::arrayValue);
    for (const auto& s : request.scopes) e.data["scopes"].append(s);
    // The consent and consent.granted in one transaction (docs/events.md, "Recording").
    PORTCULLIS_RETURN_IF_ERROR(ctx.change_with_event(
        [&] {
          return consents.remember(request.user_id, request.client_id, request.resource_id,
                                   request.scopes);
        },
        std::move(e)));
    return issue_code_and_redirect(ctx, request);
  }

 private:
  static bool is_portal(const LoginRequest& request) {
    return request.client_id == admin::kPortalClientId;
  }

  std::string issuer_of(const LoginRequest& request) const {
    if (is_portal(request)) return services_.config.base_url;
    return services_.config.base_url + "/resources/" + request.resource_id;
  }

  // False when the user has nothing to consent to: the admin portal is first-party (signing in
  // is all it asks), or a remembered consent covers the scopes and prompt is not "consent".
  // `read`: the remembered consent's scopes when they were read already (with the session),
  // else nullptr: read here.
  Result<bool> must_ask_consent(const LoginRequest& request,
                                const std::optional<std::string>* read = nullptr) {
    if (is_portal(request)) return false;
    if (prompt_has(request.prompt, "consent")) return true;
    if (read) return !ConsentStore::stored_scopes_cover(*read, request.scopes);
    ConsentStore consents(services_.db);
    PORTCULLIS_ASSIGN_OR_RETURN(bool covered, consents.covers(request.user_id, request.client_id,
                                                              request.resource_id, request.scopes));
    return !covered;
  }

  http::Response consent_required(const LoginRequest& request) const {
    return redirect_error(request.redirect_uri, "consent_required",
                          "the user has not consented to these scopes", request.state,
                          issuer_of(request));
  }

  http::Response consent_page(const LoginRequest& request) const {
    return http::Response::see_other(
        services_.config.base_url +
        "/oauth/consent?login_request_id=" + http::url_encode(request.id));
  }

  Result<http::Response> issue_code_and_redirect(server::Context&, const LoginRequest& request) {
    int64_t now = unix_now();
    // Completing first makes a double-submitted form fail instead of minting a second code.
    PORTCULLIS_RETURN_IF_ERROR(LoginRequestStore(services_.db).complete(request.id, now));
    return issue_code(request, now);
  }

  // The code, and the 303 that carries it back to the client. request.id is empty when the
  // request was never stored (continue_signed_in).
  Result<http::Response> issue_code(const LoginRequest& request, int64_t now) {
    CodeBinding binding;
    binding.login_request_id = request.id;
    binding.client_id = request.client_id;
    binding.resource_id = request.resource_id;
    binding.redirect_uri = request.redirect_uri;
    binding.code_challenge = request.code_challenge;
    binding.scope = format::join_scopes(request.scopes);
    binding.user_id = request.user_id;
    binding.auth_time = request.auth_time;
    binding.nonce = request.nonce;
    binding.dpop_jkt = request.dpop_jkt;
    binding.organization_id = request.signin_organization_id;
    // A resource's client gets a sealed code: nothing is written (tokens/sealed_code.h). The
    // admin portal redeems its own codes from the table (admin/portal_signin.h).
    PORTCULLIS_ASSIGN_OR_RETURN(
        std::string code,
        is_portal(request)
            ? CodeStore(services_.db).issue(binding, now)
            : seal_code(services_.master_key, sealed_code_for(binding, new_id("grt_"), now)));
    return http::Response::see_other(
        with_params(request.redirect_uri,
                    {{"code", code}, {"state", request.state}, {"iss", issuer_of(request)}}));
  }

  server::Services& services_;
};

}  // namespace

std::unique_ptr<LoginFlow> make_login_flow(server::Services& services) {
  return std::make_unique<AuthorizationFlow>(services);
}

Result<http::Response> authorize(server::Context& ctx) {
  const http::Request& req = ctx.request;
  http::Form params = req.query;
  if (req.method == "POST") {
    auto form = req.form();
    if (!form) return bad_request_page("The authorization request is not a valid form.");
    params = std::move(form).value();
  }
  int64_t now = unix_now();

  // 1. The client and the redirect URI. Nothing here may redirect.
  for (const char* name : {"client_id", "redirect_uri", "resource"}) {
    std::string n(name);
    size_t count = std::count_if(params.all().begin(), params.all().end(),
                                 [&](const auto& p) { return p.first == n; });
    if (count > 1) return bad_request_page("The parameter " + n + " is repeated.");
  }
  std::string client_id = params.get_or("client_id", "");
  if (client_id.empty()) return bad_request_page("The request names no client (client_id).");
  // A registered client comes with the resource it was registered for, and with the browser's
  // session and remembered consent (one read).
  auto resolved = resolve_client_and_resource(ctx.services, client_id, req, now);
  if (!resolved) {
    if (resolved.status().code() == Code::kUnavailable) return resolved.status();
    return bad_request_page(resolved.status().code() == Code::kNotFound
                                ? "The application that sent you here is not registered."
                                : resolved.status().message());
  }
  const ClientInfo* client = &resolved->client;

  std::optional<std::string> indicator = params.get("resource");
  Result<Resource> resource = Status::not_found("");
  if (client->kind == ClientInfo::Kind::kCimd) {
    if (!indicator || indicator->empty()) {
      return bad_request_page(
          "The application must name the server it wants to access (the resource parameter).");
    }
    resource = resource_for_indicator(ctx.services.db, *indicator);
    if (!resource) {
      if (resource.status().code() == Code::kUnavailable) return resource.status();
      return bad_request_page("The server this application asks for is not known here.");
    }
    if (!resource->cimd_enabled) {
      return bad_request_page("This server does not accept applications identified by URL.");
    }
  } else {
    if (!resolved->resource) {
      return bad_request_page("The server this application was registered for no longer exists.");
    }
    resource = std::move(*resolved->resource);
  }

  std::string redirect_uri;
  if (auto requested = params.get("redirect_uri"); requested && !requested->empty()) {
    bool registered =
        std::any_of(client->redirect_uris.begin(), client->redirect_uris.end(),
                    [&](const std::string& r) { return redirect_uri_matches(r, *requested); });
    if (!registered) {
      return bad_request_page("The redirect URI is not registered for this application.");
    }
    redirect_uri = *requested;
  } else if (client->redirect_uris.size() == 1) {
    redirect_uri = client->redirect_uris[0];
  } else {
    return bad_request_page("The request names no redirect URI (redirect_uri).");
  }

  // 2. Everything else: errors go back to the client.
  const std::string issuer = resource->issuer(ctx.services.config);
  const std::string state = params.get_or("state", "");
  auto fail = [&](const std::string& error, const std::string& description) {
    return redirect_error(redirect_uri, error, description, state, issuer);
  };
  if (auto repeated = params.first_repeated()) {
    return fail("invalid_request", "the parameter " + *repeated + " is repeated");
  }
  std::string response_type = params.get_or("response_type", "");
  if (response_type.empty()) return fail("invalid_request", "response_type is required");
  if (response_type != "code") {
    return fail("unsupported_response_type", "only response_type=code is supported");
  }
  if (!client->allows_grant("authorization_code")) {
    return fail("unauthorized_client", "this client may not use the authorization code grant");
  }
  std::string challenge = params.get_or("code_challenge", "");
  std::string method = params.get_or("code_challenge_method", "");
  if (challenge.empty()) return fail("invalid_request", "code_challenge is required (PKCE)");
  if (method != "S256") {
    return fail("invalid_request", "code_challenge_method must be S256");
  }
  if (!is_valid_code_challenge(challenge)) {
    return fail("invalid_request", "code_challenge is not an S256 challenge");
  }
  if (indicator && !resource_indicator_matches(*resource, *indicator)) {
    return fail("invalid_target", "resource is not the server this client may access");
  }
  std::vector<std::string> scopes;
  if (auto scope = params.get("scope"); scope && !scope->empty()) {
    // A grant's scope is stored in 2,000 characters: anything longer cannot be granted, and is
    // refused before it is split (120,000 distinct names cost half a second to split).
    if (scope->size() > kMaxScopeChars) {
      return fail("invalid_scope",
                  "scope is longer than " + std::to_string(kMaxScopeChars) + " characters");
    }
    scopes = format::scope_list(*scope);
    for (const auto& s : scopes) {
      bool known = std::any_of(resource->scopes.begin(), resource->scopes.end(),
                               [&](const ScopeDef& d) { return d.name == s; });
      // The name is echoed cut short: a redirect's Location must stay small.
      if (!known) return fail("invalid_scope", "unknown scope " + s.substr(0, 64));
    }
  } else {
    for (const auto& d : resource->scopes) scopes.push_back(d.name);
  }
  std::string prompt = params.get_or("prompt", "");
  for (const auto& p : format::scope_list(prompt)) {
    if (p != "none" && p != "login" && p != "consent" && p != "select_account") {
      return fail("invalid_request", "unsupported prompt value " + p);
    }
  }
  if (prompt_has(prompt, "none") && format::scope_list(prompt).size() > 1) {
    return fail("invalid_request", "prompt=none cannot be combined with other values");
  }
  if (state.size() > 2048 || params.get_or("nonce", "").size() > 512) {
    return fail("invalid_request", "state or nonce is too long");
  }
  const std::string dpop_jkt = params.get_or("dpop_jkt", "");
  if (!dpop_jkt.empty() && !is_jwk_thumbprint(dpop_jkt)) {
    return fail("invalid_request", "dpop_jkt is not a JWK SHA-256 thumbprint");
  }

  LoginRequest login;
  login.client_id = client->client_id;
  login.resource_id = resource->id;
  login.redirect_uri = redirect_uri;
  login.scopes = scopes;
  login.state = state;
  login.code_challenge = challenge;
  login.nonce = params.get_or("nonce", "");
  login.prompt = prompt;
  login.login_hint = params.get_or("login_hint", "").substr(0, 320);
  login.domain_hint = params.get_or("domain_hint", "").substr(0, 253);
  login.organization_id = params.get_or("organization_id", "").substr(0, 64);
  login.connection_id = params.get_or("connection_id", "").substr(0, 64);
  login.dpop_jkt = dpop_jkt;

  // A browser that is already signed in skips the sign-in pages unless prompt=login. Its
  // user's remembered consent is read with the session: with the client (above), or now for a
  // CIMD client, whose resource the request named.
  std::optional<identity::Session> session =
      resolved->session_read
          ? std::move(resolved->session)
          : identity::SessionStore(ctx.services.db, ctx.services.config)
                .current(req, now, identity::ConsentOf{login.client_id, login.resource_id});
  bool signed_in = session && !prompt_has(prompt, "login");
  if (signed_in) {
    // A request that names another organization than the one the session signed in through
    // signs in again, through that organization (oauth/signin_organization.h).
    PORTCULLIS_ASSIGN_OR_RETURN(const std::string named,
                                named_organization(ctx.services.db, login));
    signed_in = session_serves(session->organization_id, named);
  }
  if (signed_in) {
    login.user_id = session->user_id;
    login.auth_time = session->auth_time;
    login.signin_organization_id = session->organization_id;
  } else if (prompt_has(prompt, "none")) {
    return fail("login_required", session ? "the user is not signed in through this organization"
                                          : "the user is not signed in");
  }
  if (!login.user_id.empty()) {
    return AuthorizationFlow(ctx.services).continue_signed_in(login, session->consented_scopes);
  }
  LoginRequestStore store(ctx.services.db);
  PORTCULLIS_RETURN_IF_ERROR(store.create(login, now));
  return http::Response::see_other(ctx.services.config.base_url +
                                   "/oauth/login?login_request_id=" + http::url_encode(login.id));
}

}  // namespace portcullis::oauth
