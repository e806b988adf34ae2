// GET /admin: where each part of the environment is managed; an organization administrator's
// organizations.
#include "home.h"

#include "organizations/organization_store.h"

namespace portcullis::admin_worker {
namespace {

constexpr std::string_view kEnvironment = R"(<h1 id="page-title">Overview</h1>
<p class="muted">Everything the management API can do, for the people who run this environment.</p>
<div class="grid">
<section class="panel" aria-labelledby="h-res"><h2 id="h-res"><a href="/admin/resources">Resources</a></h2>
<p>The MCP servers this environment protects: their URL, scopes, token lifetime, client registration, and the clients registered to them.</p></section>
<section class="panel" aria-labelledby="h-org"><h2 id="h-org"><a href="/admin/organizations">Organizations</a></h2>
<p>Customers and their domains, SSO connections, SCIM directories and members.</p></section>
<section class="panel" aria-labelledby="h-usr"><h2 id="h-usr"><a href="/admin/users">Users</a></h2>
<p>Find a user by e-mail; their memberships, identities, sessions, refresh tokens and access log.</p></section>
<section class="panel" aria-labelledby="h-cli"><h2 id="h-cli"><a href="/admin/clients">API clients</a></h2>
<p>Credentials for the management API, with the scopes each may use.</p></section>
<section class="panel" aria-labelledby="h-wh"><h2 id="h-wh"><a href="/admin/webhooks">Webhooks</a></h2>
<p>Endpoints that receive events, their delivery log and replays.</p></section>
<section class="panel" aria-labelledby="h-ev"><h2 id="h-ev"><a href="/admin/events">Events</a></h2>
<p>The audit log: every sign-in, token, provisioning step and admin change.</p></section>
</div>)";

constexpr std::string_view kOrganizationAdmin = R"(<h1 id="page-title">Overview</h1>
<p class="muted">You administer these organizations: their domains, SSO connections, SCIM directories and members.</p>
<ul>{{items}}</ul>)";
constexpr std::string_view kOrganizationItem =
    R"(<li><a href="/admin/organizations/{{id}}">{{name}}</a> <span class="muted mono">{{id}}</span></li>)";

Result<View> overview(Admin& admin) {
  if (admin.access.environment_admin) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content, html(kEnvironment, {}));
    return View{"Overview", content, "", 200};
  }
  organizations::OrganizationStore store(admin.db());
  pages::Html items;
  for (const auto& id : admin.access.organization_ids) {
    auto org = store.get(id);
    if (!org) continue;
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html item,
                                html(kOrganizationItem, {{"id", id}, {"name", org->display_name}}));
    items += item;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content, html(kOrganizationAdmin, {{"items", items}}));
  return View{"Overview", content, "organizations", 200};
}

}  // namespace

void install_home_routes(server::App& app) {
  add_page(app, "/admin", overview);
}

}  // namespace portcullis::admin_worker
