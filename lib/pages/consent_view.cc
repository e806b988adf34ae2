#include "pages/consent_view.h"

#include "log/log.h"
#include "pages/error_page.h"
#include "pages/layout.h"

namespace portcullis::pages {
namespace {

// Deny comes first in the form: pressing Enter or tabbing onto the form never lands on Allow
// by accident, and no button has autofocus (a click-jacked or hurried keypress grants nothing).
constexpr std::string_view kConsent =
    R"({{signed_in}}<h1 id="page-title"><bdi>{{client}}</bdi> wants to access <bdi>{{resource}}</bdi></h1>
<dl class="facts">
<div><dt>Application</dt><dd><bdi>{{client}}</bdi>{{client_host}}</dd></div>
<div><dt>Sends you back to</dt><dd><bdi class="host">{{redirect_host}}</bdi></dd></div>
</dl>
{{warning}}<h2 id="scopes-title">If you allow it, it will be able to</h2>
{{scopes}}<form method="post" action="/oauth/consent" class="actions">
<input type="hidden" name="login_request_id" value="{{id}}">
<input type="hidden" name="csrf" value="{{csrf}}">
<button type="submit" name="decision" value="deny" class="button secondary">Deny</button>
<button type="submit" name="decision" value="allow" class="button primary">Allow</button>
</form>)";

constexpr std::string_view kSignedIn =
    R"(<p class="eyebrow">Signed in as <strong><bdi>{{email}}</bdi></strong></p>
)";

constexpr std::string_view kClientHost = R"( <span class="host">({{host}})</span>)";

constexpr std::string_view kLocalhostWarning = R"(<div class="warning" role="note">
<strong>This application runs on a computer, not a website.</strong> Any program on the device that receives this access could use it. Allow only if you just started <bdi>{{client}}</bdi> yourself.
</div>
)";

constexpr std::string_view kScopeList =
    R"(<ul class="scopes" aria-labelledby="scopes-title">{{items}}</ul>
)";

constexpr std::string_view kScope =
    R"(<li>{{description}}<br><span class="scope-name">{{name}}</span></li>)";

constexpr std::string_view kNoScopes =
    R"(<p>Use <bdi>{{resource}}</bdi> on your behalf, with no specific permissions.</p>
)";

Result<Html> scope_list(const ConsentScreen& s) {
  if (s.scopes.empty()) return render(kNoScopes, {{"resource", s.resource_name}});
  Html items;
  for (const auto& scope : s.scopes) {
    const std::string& description = scope.description.empty() ? scope.name : scope.description;
    PORTCULLIS_ASSIGN_OR_RETURN(
        Html item, render(kScope, {{"description", description}, {"name", scope.name}}));
    items += item;
  }
  return render(kScopeList, {{"items", items}});
}

Result<Html> consent_content(const ConsentView& v) {
  const ConsentScreen& s = v.screen;
  // A registered client may have no name; the page still has to say who asks.
  const std::string client = s.client_name.empty() ? "An unnamed application" : s.client_name;
  Html signed_in, client_host, warning;
  if (!v.signed_in_as.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(signed_in, render(kSignedIn, {{"email", v.signed_in_as}}));
  }
  if (!s.client_host.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(client_host, render(kClientHost, {{"host", s.client_host}}));
  }
  if (s.redirect_is_localhost) {
    PORTCULLIS_ASSIGN_OR_RETURN(warning, render(kLocalhostWarning, {{"client", client}}));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(Html scopes, scope_list(s));
  return render(kConsent, {{"signed_in", signed_in},
                           {"client", client},
                           {"resource", s.resource_name},
                           {"client_host", client_host},
                           {"redirect_host", s.redirect_host},
                           {"warning", warning},
                           {"scopes", scopes},
                           {"id", v.login_request_id},
                           {"csrf", v.csrf_token}});
}

}  // namespace

http::Response consent_page(const ConsentView& v) {
  auto content = consent_content(v);
  if (!content) {
    log::error("consent page not rendered", {{"error", content.status().message()}});
    return status_page(content.status());
  }
  return render_page(200, Page{"Allow access?", std::move(content).value(), v.form_targets});
}

}  // namespace portcullis::pages
