// /admin/users: find a user by e-mail (or page through everyone with the API's keyset tokens);
// /admin/users/{id}: their memberships, identities, browser sessions and refresh tokens (grants)
// with revoke, the per-user scope access log, their environment role and their recent events.
#include "operations/users.h"

#include "core/time.h"
#include "identity/identity_store.h"
#include "identity/session_store.h"
#include "identity/user_listing.h"
#include "listing.h"
#include "organizations/organization_store.h"
#include "pages.h"
#include "tokens/grants.h"
#include "widgets.h"

namespace portcullis::admin_worker {
namespace {

constexpr int kSearchLimit = 25;
constexpr int kShownPerSection = 50;

std::string user_label(const identity::User& u) {
  return u.email.empty() ? u.id : u.email;
}

Result<pages::Html> user_rows(const std::vector<identity::User>& users) {
  pages::Html rows;
  for (const auto& u : users) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html name, link("admin/users/" + u.id, user_label(u)));
    std::string shown =
        u.display_name.value_or((u.given_name.value_or("") + " " + u.family_name.value_or("")));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html tr,
        row({name, text(shown), text(u.active ? "active" : "deactivated"),
             text(u.is_environment_admin() ? "environment admin" : ""), text(u.create_time)}));
    rows += tr;
  }
  return rows;
}

Result<View> list_users(Admin& admin) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  const std::string q = admin.request().query.get_or("email", "");
  std::vector<identity::User> users;
  pages::Html more;
  std::string caption = "Users";
  std::string empty =
      "Users appear when they first sign in, when a SCIM directory provisions "
      "them, or when they are created through the API.";
  if (!q.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        users, identity::UserStore(admin.db()).search_by_email_prefix(q, kSearchLimit));
    caption = "Users whose address starts with " + q;
    empty = "No user's address starts with " + q + ". Check the spelling, or search for less.";
  } else {
    PORTCULLIS_ASSIGN_OR_RETURN(
        auto page,
        fetch_list<organizations::ListedUser>(
            admin, identity::UserStore::listing(), [&](const auto& request, const auto& codec) {
              return organizations::list_environment_users(admin.db(), request, codec);
            }));
    for (const auto& u : page.items) users.push_back(u.user);
    PORTCULLIS_ASSIGN_OR_RETURN(more, pager_of("admin/users", "", page, "users"));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html rows, user_rows(users));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table(caption, {"User", "Name", "Status", "Role", "Created"}, rows, !users.empty(), empty));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html field, input_field("email", "E-mail address (or its beginning)", q, "search"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content,
                              html(R"(<h1 id="page-title">Users</h1>
<form class="search" method="get" action="/admin/users" role="search" aria-label="Find users">
<div>{{field}}</div><div><button type="submit" class="button primary">Search</button></div>
</form>
{{list}}{{more}})",
                                   {{"field", field}, {"list", list}, {"more", more}}));
  return View{"Users", content, "users", 200};
}

Result<pages::Html> memberships_section(Admin& admin, const identity::User& u) {
  PORTCULLIS_ASSIGN_OR_RETURN(auto memberships,
                              organizations::MembershipStore(admin.db()).of_users({u.id}));
  pages::Html rows;
  size_t n = 0;
  organizations::OrganizationStore orgs(admin.db());
  for (const auto& m : memberships[u.id]) {
    auto o = orgs.get(m.organization_id);
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html name, link("admin/organizations/" + m.organization_id,
                                                       o ? o->display_name : m.organization_id));
    std::string roles;
    for (const auto& r : m.roles) roles += (roles.empty() ? "" : ", ") + r;
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html tr,
                                row({name, text(roles.empty() ? "(none)" : roles), text(m.status),
                                     text(m.provisioned_by), text(m.join_time)}));
    rows += tr;
    ++n;
  }
  return table("Memberships", {"Organization", "Roles", "Status", "Provisioned by", "Joined"}, rows,
               n > 0, "Not a member of any organization.");
}

Result<pages::Html> identities_section(Admin& admin, const identity::User& u) {
  PORTCULLIS_ASSIGN_OR_RETURN(auto identities,
                              identity::IdentityStore(admin.db()).of_users({u.id}));
  pages::Html rows;
  size_t n = 0;
  for (const auto& i : identities[u.id]) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html tr, row({text(i.provider), text(i.subject),
                                                     text(i.connection_id), text(i.create_time)}));
    rows += tr;
    ++n;
  }
  return table("Identities", {"Provider", "Subject", "Connection", "Linked"}, rows, n > 0,
               "No account signs this user in yet: the first sign-in links one.");
}

Result<pages::Html> sessions_section(Admin& admin, const identity::User& u, int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      auto sessions,
      identity::SessionStore(admin.db(), admin.config()).live_of_user(u.id, now, kShownPerSection));
  pages::Html rows;
  for (const auto& s : sessions) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html tr, row({text(s.create_time), text(s.ip), text(s.user_agent.substr(0, 80)),
                             text(std::to_string((s.expires_at - now) / 60) + " min left")}));
    rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table("Browser sessions", {"Signed in", "From", "Browser", "Expires"}, rows,
            !sessions.empty(), "No live browser session: the user is signed out everywhere."));
  PORTCULLIS_ASSIGN_OR_RETURN(
      auto grants, oauth::GrantStore(admin.db()).live_of_user(u.id, now, kShownPerSection));
  pages::Html grant_rows;
  for (const auto& g : grants) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html resource,
                                link("admin/resources/" + g.resource_id, g.resource_id));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id, html("<code>{{id}}</code>", {{"id", g.id}}));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html revoke,
        post_form(admin, "admin/users/" + u.id + "/grants/" + g.id + "/revoke", pages::Html(),
                  "Revoke", "danger small",
                  "Revoke this grant? Its refresh token and access tokens stop working.",
                  "inline"));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html tr,
                                row({id, text(g.client_id.substr(0, 80)), resource, text(g.scope),
                                     text(g.dpop_jkt.empty() ? "Bearer" : "DPoP"), revoke}));
    grant_rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html grant_list,
      table("Refresh tokens (grants)",
            {"Grant", "Client", "Resource", "Scope", "Binding", "Actions"}, grant_rows,
            !grants.empty(), "No live grant: no client holds a refresh token."));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html revoke_all,
      post_form(admin, "admin/users/" + u.id + "/sessions/revoke", pages::Html(),
                "Sign out everywhere and revoke all tokens", "danger",
                "End every session of this user and revoke all their refresh tokens?", "inline"));
  return html(R"(<section aria-labelledby="sessions"><h2 id="sessions">Sessions and tokens</h2>
<div class="actions">{{revoke_all}}</div>{{list}}{{grants}}</section>)",
              {{"revoke_all", revoke_all}, {"list", list}, {"grants", grant_list}});
}

Result<pages::Html> access_section(Admin& admin, const identity::User& u) {
  PORTCULLIS_ASSIGN_OR_RETURN(Json::Value access, events::EventStore(admin.db()).user_access(u.id));
  pages::Html rows;
  for (const auto& a : access["access"]) {
    std::string failure;
    if (a.isMember("last_failure")) {
      failure =
          a["last_failure"]["result"].asString() + " at " + a["last_failure"]["time"].asString();
    }
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html scope,
                                html("<code>{{s}}</code>", {{"s", a["scope"].asString()}}));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html tr,
        row({text(a["resource_id"].asString()), scope, text(a.get("grant_time", "").asString()),
             text(a.get("last_used_time", "never").asString()),
             text(std::to_string(a["validation_count"].asInt64())), text(failure)}));
    rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table("Scope access log",
            {"Resource", "Scope", "Granted", "Last used", "Validations", "Last failure"}, rows,
            access["access"].size() > 0,
            "The user has not granted any scope yet: consents, tokens and MCP servers' "
            "validations show here."));
  return html(
      R"(<section aria-labelledby="access"><h2 id="access">Scope access log</h2>{{list}}</section>)",
      {{"list", list}});
}

Result<View> show_user(Admin& admin) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(
      identity::User u, identity::UserStore(admin.db()).get(admin.request().path_param("user_id")));
  const int64_t now = unix_now();
  pages::Html notice;
  if (admin.request().query.has("revoked")) {
    PORTCULLIS_ASSIGN_OR_RETURN(notice, message("notice",
                                                "The user is signed out everywhere; "
                                                "their refresh tokens are revoked."));
  } else if (admin.request().query.has("saved")) {
    PORTCULLIS_ASSIGN_OR_RETURN(notice, message("notice", "Your changes were saved."));
  } else if (admin.request().query.has("grant_revoked")) {
    PORTCULLIS_ASSIGN_OR_RETURN(notice, message("notice", "The grant was revoked."));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id, html("<code>{{id}}</code>", {{"id", u.id}}));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html about,
      facts({{"ID", id},
             {"E-mail", text(u.email.empty() ? "(none)"
                                             : u.email + (u.email_verified ? " (verified)"
                                                                           : " (not verified)"))},
             {"Name", text(u.display_name.value_or(u.given_name.value_or("") + " " +
                                                   u.family_name.value_or("")))},
             {"Status", text(u.active ? "active" : "deactivated")},
             {"Environment role", text(u.is_environment_admin() ? "admin" : "(none)")},
             {"External ID", text(u.external_id.value_or("(none)"))},
             {"Created", text(u.create_time)}}));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html memberships, memberships_section(admin, u));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html identities, identities_section(admin, u));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html sessions, sessions_section(admin, u, now));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html access, access_section(admin, u));
  events::EventFilter filter;
  filter.user_id = u.id;
  PORTCULLIS_ASSIGN_OR_RETURN(auto recent, recent_events(admin, filter, 10));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html history,
      events_table(admin, recent, "Recent events", "Nothing recorded about this user yet."));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html role, checkbox("environment_admin", "Environment administrator",
                                 u.is_environment_admin(), "May use every page of this portal."));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html active,
                              checkbox("active", "Active", u.active,
                                       "A deactivated user cannot sign in; deactivating ends "
                                       "their sessions and revokes their grants."));
  pages::Html fields;
  fields += role;
  fields += active;
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html edit,
                              post_form(admin, "admin/users/" + u.id, fields, "Save", "primary"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content, html(R"(<p><a href="/admin/users">Users</a></p>
<h1 id="page-title">{{name}}</h1>
{{notice}}<div class="panel">{{about}}</div>
<section aria-labelledby="settings"><h2 id="settings">Role and status</h2>{{edit}}</section>
<section aria-labelledby="memberships"><h2 id="memberships">Memberships</h2>{{memberships}}</section>
<section aria-labelledby="identities"><h2 id="identities">Identities</h2>{{identities}}</section>
{{sessions}}{{access}}
<section aria-labelledby="history"><h2 id="history">History</h2>{{history}}
<p><a href="/admin/events?user_id={{id}}">All events of this user</a></p></section>)",
                                                        {{"name", user_label(u)},
                                                         {"notice", notice},
                                                         {"about", about},
                                                         {"edit", edit},
                                                         {"memberships", memberships},
                                                         {"identities", identities},
                                                         {"sessions", sessions},
                                                         {"access", access},
                                                         {"history", history},
                                                         {"id", u.id}}));
  return View{user_label(u), content, "users", 200};
}

Result<http::Response> update_user(Admin& admin, const http::Form& form) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  const std::string id = admin.request().path_param("user_id");
  identity::UserFields fields;
  fields.active = form.get_or("active", "") == "1";
  fields.environment_roles = std::vector<std::string>();
  if (form.get_or("environment_admin", "") == "1") {
    fields.environment_roles->emplace_back(identity::kEnvironmentAdminRole);
  }
  if (id == admin.access.user.id && (!*fields.active || fields.environment_roles->empty())) {
    return Status::invalid_argument(
        "You cannot take your own administrator role or deactivate yourself here: ask another "
        "environment administrator.");
  }
  PORTCULLIS_RETURN_IF_ERROR(
      operations::update_user(admin.ctx, id, fields, {"active", "environment_roles"}).status());
  return redirect("/admin/users/" + id + "?saved=1");
}

Result<http::Response> revoke_sessions(Admin& admin, const http::Form&) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  const std::string id = admin.request().path_param("user_id");
  PORTCULLIS_RETURN_IF_ERROR(operations::revoke_user_sessions(admin.ctx, id));
  return redirect("/admin/users/" + id + "?revoked=1");
}

Result<http::Response> revoke_grant(Admin& admin, const http::Form&) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  const std::string id = admin.request().path_param("user_id");
  PORTCULLIS_RETURN_IF_ERROR(
      operations::revoke_user_grant(admin.ctx, id, admin.request().path_param("grant_id")));
  return redirect("/admin/users/" + id + "?grant_revoked=1");
}

}  // namespace

void install_user_pages(server::App& app) {
  add_page(app, "/admin/users", list_users);
  add_page(app, "/admin/users/{user_id}", show_user);
  add_form(app, "/admin/users/{user_id}", update_user);
  add_form(app, "/admin/users/{user_id}/sessions/revoke", revoke_sessions);
  add_form(app, "/admin/users/{user_id}/grants/{grant_id}/revoke", revoke_grant);
}

}  // namespace portcullis::admin_worker
