#include "pages/signin_views.h"

#include "http/request.h"
#include "log/log.h"
#include "pages/error_page.h"
#include "pages/layout.h"

namespace portcullis::pages {
namespace {

constexpr std::string_view kHiddenFields =
    R"(<input type="hidden" name="login_request_id" value="{{id}}">
<input type="hidden" name="csrf" value="{{csrf}}">)";

constexpr std::string_view kAlert =
    R"(<div class="alert" role="alert" id="form-error">{{message}}</div>
)";

constexpr std::string_view kLogin = R"(<h1 id="page-title">Sign in</h1>
{{lead}}{{alert}}{{methods}}<form method="post" action="/oauth/login/email" class="stack">
{{hidden}}
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" autocapitalize="off" spellcheck="false" required autofocus value="{{email}}" aria-invalid="{{invalid}}" aria-describedby="{{described_by}}">
<p class="help" id="email-help">We will e-mail you a 6-digit code and a sign-in link.</p>
<button type="submit" class="button primary">Continue with e-mail</button>
</form>)";

constexpr std::string_view kLead =
    R"(<p class="lead">to continue to <strong><bdi>{{name}}</bdi></strong></p>
)";

constexpr std::string_view kClient =
    R"(<p class="help">Requested by <strong><bdi>{{client}}</bdi></strong></p>
)";

constexpr std::string_view kMethods = R"(<ul class="methods">{{items}}</ul>
<p class="divider">or</p>
)";

constexpr std::string_view kMethod =
    R"(<li><a class="button secondary" href="/{{path}}">{{label}}</a></li>)";

constexpr std::string_view kCode = R"(<h1 id="page-title">Check your e-mail</h1>
<p class="lead">We sent a 6-digit code to <strong><bdi>{{email}}</bdi></strong>. It works for 10 minutes.</p>
{{alert}}<form method="post" action="/oauth/login/code" class="stack">
{{hidden}}
<label for="code">Sign-in code</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required autofocus class="code-input" aria-invalid="{{invalid}}" aria-describedby="{{described_by}}">
<p class="help" id="code-help">Or open the link in the e-mail.</p>
<button type="submit" class="button primary">Continue</button>
</form>
<div class="more">
<form method="post" action="/oauth/login/email">
{{hidden}}
<input type="hidden" name="email" value="{{email}}">
<button type="submit" class="link-button">Send a new code</button>
</form>
<a href="/oauth/login?login_request_id={{id_url}}">Use a different e-mail address</a>
</div>)";

constexpr std::string_view kLink = R"(<h1 id="page-title">Finish signing in</h1>
<p class="lead">Sign in as <strong><bdi>{{email}}</bdi></strong>{{target}}.</p>
<form method="post" action="/oauth/login/link" class="stack">
<input type="hidden" name="token" value="{{token}}">
<input type="hidden" name="csrf" value="{{csrf}}">
<button type="submit" class="button primary">Continue</button>
</form>
<p class="help more">If you did not try to sign in, close this page: nothing happens without this button.</p>)";

constexpr std::string_view kTarget = R"( to continue to <strong><bdi>{{name}}</bdi></strong>)";

Html or_empty(Result<Html> r) {
  if (!r) {
    log::error("page fragment not rendered", {{"error", r.status().message()}});
    return Html();
  }
  return std::move(r).value();
}

Html hidden_fields(const std::string& id, const std::string& csrf) {
  return or_empty(render(kHiddenFields, {{"id", id}, {"csrf", csrf}}));
}

Html alert(const std::string& message) {
  if (message.empty()) return Html();
  return or_empty(render(kAlert, {{"message", message}}));
}

// A template failure must not produce a page with a missing form: fall back to a 500 page.
http::Response page_or_error(int status, const std::string& title, Result<Html> content,
                             std::vector<std::string> form_targets = {}) {
  if (!content) {
    log::error("page not rendered", {{"error", content.status().message()}});
    return status_page(content.status());
  }
  return render_page(status, Page{title, std::move(content).value(), std::move(form_targets)});
}

}  // namespace

http::Response login_page(int status, const LoginView& v) {
  Html lead;
  if (!v.resource_name.empty()) lead = or_empty(render(kLead, {{"name", v.resource_name}}));
  if (!v.client_name.empty()) lead += or_empty(render(kClient, {{"client", v.client_name}}));
  Html methods;
  if (!v.methods.empty()) {
    Html items;
    for (const SignInMethod& m : v.methods) {
      // Our own paths only; the template puts the leading "/" so no value picks a scheme.
      if (m.path.empty() || m.path[0] != '/' || m.path.rfind("//", 0) == 0) continue;
      items += or_empty(render(kMethod, {{"path", m.path.substr(1)}, {"label", m.label}}));
    }
    methods = or_empty(render(kMethods, {{"items", items}}));
  }
  bool invalid = !v.error.empty();
  return page_or_error(
      status, "Sign in",
      render(kLogin, {{"lead", lead},
                      {"alert", alert(v.error)},
                      {"methods", methods},
                      {"hidden", hidden_fields(v.login_request_id, v.csrf_token)},
                      {"email", v.email},
                      {"invalid", invalid ? "true" : "false"},
                      {"described_by", invalid ? "form-error email-help" : "email-help"}}));
}

http::Response code_page(int status, const CodeView& v) {
  bool invalid = !v.error.empty();
  return page_or_error(
      status, "Enter your code",
      render(kCode, {{"email", v.email},
                     {"alert", alert(v.error)},
                     {"hidden", hidden_fields(v.login_request_id, v.csrf_token)},
                     {"invalid", invalid ? "true" : "false"},
                     {"described_by", invalid ? "form-error code-help" : "code-help"},
                     {"id_url", http::url_encode(v.login_request_id)}}),
      v.form_targets);
}

http::Response link_page(const LinkView& v) {
  Html target;
  if (!v.resource_name.empty()) target = or_empty(render(kTarget, {{"name", v.resource_name}}));
  return page_or_error(
      200, "Finish signing in",
      render(kLink,
             {{"email", v.email}, {"target", target}, {"token", v.token}, {"csrf", v.csrf_token}}),
      v.form_targets);
}

http::Response continue_to_idp_page(const std::string& sso_start_query) {
  // The path is fixed in the template and only the query is substituted: the template check
  // refuses a value at the start of a URL attribute, which could be a javascript: URL.
  constexpr std::string_view kContinue = R"(<h1 id="page-title">Sign in with your organization</h1>
<p class="lead">Your organization signs you in with its own identity provider.</p>
<p><a class="button primary" id="continue" href="/sso/start?{{query}}">Continue</a></p>)";
  http::Response r = page_or_error(200, "Sign in with your organization",
                                   render(kContinue, {{"query", sso_start_query}}), {});
  r.set_header("Refresh", "0; url=/sso/start?" + sso_start_query);
  return r;
}

http::Response too_many_codes_page(const std::string& login_request_id, int retry_after_seconds) {
  int minutes = (retry_after_seconds + 59) / 60;
  std::string wait = minutes <= 1 ? "a minute" : std::to_string(minutes) + " minutes";
  http::Response r = error_page(
      429, "Too many codes requested",
      "Too many sign-in codes were requested for this address or from this network. Wait " + wait +
          ", then try again. Codes already sent keep working until they expire.",
      login_request_id, "Back to sign-in");
  r.set_header("Retry-After", std::to_string(retry_after_seconds));
  return r;
}

}  // namespace portcullis::pages
