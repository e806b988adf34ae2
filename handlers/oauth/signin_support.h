// What the sign-in and consent handlers share: their dependencies, loading the login request,
// the CSRF check of every form, and finishing a sign-in once a method has proved the address.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "http/request.h"
#include "signin_routes.h"

namespace portcullis::identity {
struct User;
}

namespace portcullis::oauth_worker {

struct SigninDeps {
  LoginFlowProvider flow;
  std::shared_ptr<mail::Mailer> mailer;
  std::function<int64_t()> clock;
};

// A page route: a Status that ends the handler becomes an HTML page for the person in front
// of it, never the OAuth JSON error the rest of /oauth/* answers with.
using PageHandler = Result<http::Response> (*)(server::Context&, SigninDeps&);
server::Route page_route(std::shared_ptr<SigninDeps> deps, PageHandler handler);

// The live login request with this id; NotFound (→ the "expired" page) when it is unknown,
// completed or expired, or when `id` is not even plausible.
Result<oauth::LoginRequest> load_login_request(oauth::LoginFlow& flow, const std::string& id,
                                               int64_t now);

// The same for the `login_request_id` of the request's query (the GET pages).
Result<oauth::LoginRequest> query_login_request(server::Context& ctx, SigninDeps& deps,
                                                int64_t now);

// A form POST of one of our pages: the login request's CSRF token (constant-time compare),
// and not sent from another site where the browser says so (Sec-Fetch-Site).
bool form_post_allowed(const http::Request& request, const oauth::LoginRequest& login,
                       const http::Form& form);

// A POST of one of our forms: parsed, its login request loaded and its CSRF token checked
// (PermissionDenied → the "form has expired" page).
struct PostedForm {
  http::Form form;
  oauth::LoginRequest login;
};
Result<PostedForm> read_login_form(server::Context& ctx, oauth::LoginFlow& flow, int64_t now);

// CSP form-action sources for a page whose POST may end in the 303 to the client.
std::vector<std::string> client_form_targets(const oauth::LoginRequest& login);

// The MCP server's name for "to continue to …" (administrator-chosen, so also safe in mail);
// empty when the flow cannot describe the request.
std::string resource_name(oauth::LoginFlow& flow, const oauth::LoginRequest& login);

// An event about this login request (client, resource and, when known, user filled in).
events::Event login_event(const server::Context& ctx, const oauth::LoginRequest& login,
                          const events::EventType& type, const std::string& user_id);
// `organization_id`: the organization that refused the sign-in, when one did.
void record_login_failure(server::Context& ctx, const oauth::LoginRequest& login,
                          const std::string& reason, const std::string& email,
                          const std::string& organization_id = "");

// The address is proved: find or create the user, start the browser session, attach the user
// to the login request and let the flow continue (consent page or straight to the client).
// The Set-Cookie rides on whatever response results. `event_data` members (an SSO connection)
// are added to the login events; its organization_id names the organization that proved the
// user (an SSO connection's, a custom login completion's), which the session remembers and the
// tokens carry as org_id (oauth/signin_organization.h).
Result<http::Response> complete_sign_in(server::Context& ctx, SigninDeps& deps,
                                        const oauth::LoginRequest& login, const std::string& email,
                                        const std::string& method, int64_t now,
                                        const Json::Value& event_data = Json::Value());
// The same for a user the method already found (enterprise SSO matches a SCIM user by
// externalId, who may have no address at all).
Result<http::Response> complete_sign_in_as(server::Context& ctx, SigninDeps& deps,
                                           const oauth::LoginRequest& login,
                                           const identity::User& user, const std::string& method,
                                           int64_t now,
                                           const Json::Value& event_data = Json::Value());

}  // namespace portcullis::oauth_worker
