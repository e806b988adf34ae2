// /admin/organizations: organizations (the API's /organizations) and, on each one's page, its
// domains, SCIM directories and members; /admin/organizations/{id}/domains/{id} and
// /admin/organizations/{id}/directories/{id} are the pages of one domain and one directory.
// Organization administrators see only their organizations: any other answers 404.
#include "operations/organizations.h"

#include "domains/domain_name.h"
#include "identity/email_address.h"
#include "identity/user_listing.h"
#include "identity/user_store.h"
#include "listing.h"
#include "pages.h"
#include "widgets.h"

namespace portcullis::admin_worker {
namespace {

using organizations::Organization;

// The organization of the path, when the administrator may see it (404 otherwise).
Result<Organization> path_organization(Admin& admin) {
  const std::string id = admin.request().path_param("organization_id");
  PORTCULLIS_RETURN_IF_ERROR(require_organization(admin, id));
  auto o = organizations::OrganizationStore(admin.db()).get(id);
  if (!o && o.status().code() == Code::kInvalidArgument)
    return Status::not_found("no organization");
  return o;
}

std::string org_path(const std::string& id) {
  return "admin/organizations/" + id;
}

Result<pages::Html> notice_of(const Admin& admin) {
  static const std::vector<std::pair<std::string, std::string>> kNotices = {
      {"created", "The organization was created."},
      {"saved", "Your changes were saved."},
      {"domain_removed", "The domain was removed."},
      {"directory_deleted", "The SCIM directory was deleted; its tokens no longer work."},
      {"member_removed",
       "The member was removed; their tokens for this organization were revoked."},
      {"member_added", "The member was added."},
      {"deleted", "The organization was deleted."},
      {"verified", "The domain is verified."},
  };
  for (const auto& [key, text] : kNotices) {
    if (admin.request().query.has(key)) return message("notice", text);
  }
  return pages::Html();
}

// ---- the list -------------------------------------------------------------------------------

Result<pages::Html> organization_rows(const std::vector<Organization>& items) {
  pages::Html rows;
  for (const auto& o : items) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html name, link(org_path(o.id), o.display_name));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id, html("<code>{{id}}</code>", {{"id", o.id}}));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html tr, row({name, id, text(o.external_id.value_or("")), text(o.create_time)}));
    rows += tr;
  }
  return rows;
}

Result<View> list_organizations(Admin& admin) {
  std::vector<Organization> items;
  pages::Html more;
  if (admin.access.environment_admin) {
    organizations::OrganizationStore store(admin.db());
    PORTCULLIS_ASSIGN_OR_RETURN(
        auto page, fetch_list<Organization>(admin, organizations::OrganizationStore::listing(),
                                            [&](const auto& request, const auto& codec) {
                                              return store.list(request, codec);
                                            }));
    items = page.items;
    PORTCULLIS_ASSIGN_OR_RETURN(more, pager_of("admin/organizations", "", page, "organizations"));
  } else {
    for (const auto& id : admin.access.organization_ids) {
      auto o = organizations::OrganizationStore(admin.db()).get(id);
      if (o) items.push_back(*o);
    }
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html rows, organization_rows(items));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table("Organizations", {"Name", "ID", "External ID", "Created"}, rows, !items.empty(),
            admin.access.environment_admin
                ? "Create the first organization below, then add its domain, SSO connection and "
                  "SCIM directory on its page."
                : "You administer no organization."));
  pages::Html create;
  if (admin.access.environment_admin) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html name,
                                input_field("display_name", "Name", "", "text", "", true));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html external,
        input_field("external_id", "External ID (optional)", "", "text",
                    "Your own identifier for this customer, unique in the environment."));
    pages::Html fields;
    fields += name;
    fields += external;
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html form, post_form(admin, "admin/organizations", fields,
                                                            "Create organization", "primary"));
    PORTCULLIS_ASSIGN_OR_RETURN(
        create,
        html(
            R"(<section aria-labelledby="new-org"><h2 id="new-org">Create an organization</h2>{{form}}</section>)",
            {{"form", form}}));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html notice, notice_of(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html content,
      html(R"(<h1 id="page-title">Organizations</h1>
{{notice}}<p class="muted">Customers: their domains, SSO connections, SCIM directories and members.</p>
{{list}}{{more}}{{create}})",
           {{"notice", notice}, {"list", list}, {"more", more}, {"create", create}}));
  return View{"Organizations", content, "organizations", 200};
}

organizations::OrganizationFields read_organization_form(const http::Form& form) {
  organizations::OrganizationFields f;
  f.display_name = form.get_or("display_name", "");
  const std::string external = form.get_or("external_id", "");
  f.external_id = external.empty() ? std::nullopt : std::optional<std::string>(external);
  return f;
}

Result<http::Response> create_organization(Admin& admin, const http::Form& form) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(
      Organization o, operations::create_organization(admin.ctx, read_organization_form(form)));
  return redirect("/" + org_path(o.id) + "?created=1");
}

// ---- one organization ----------------------------------------------------------------------

Result<pages::Html> domains_section(Admin& admin, const Organization& o) {
  domains::DomainStore store(admin.db());
  PORTCULLIS_ASSIGN_OR_RETURN(auto page, fetch_list<domains::Domain>(
                                             admin, domains::DomainStore::listing(o.id),
                                             [&](const auto& request, const auto& codec) {
                                               return store.list(o.id, request, codec);
                                             },
                                             "domains_"));
  pages::Html rows;
  for (const auto& d : page.items) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html name,
                                link(org_path(o.id) + "/domains/" + d.id, d.domain));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html status,
        html(R"(<span class="badge">{{s}}</span>)",
             {{"s", d.verified ? "verified (" + d.verified_by + ")" : "pending verification"}}));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html tr, row({name, status, text(d.create_time)}));
    rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table("Domains", {"Domain", "Status", "Added"}, rows, !page.items.empty(),
            "Add the organization's e-mail domain: sign-ins from it then go to its SSO "
            "connection, and SCIM may link its users."));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html more,
                              pager_of(org_path(o.id), "", page, "domains", "domains_"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html field, input_field("domain", "Domain", "", "text",
                                     "For example acme.com. You will publish a DNS TXT record to "
                                     "prove the organization controls it.",
                                     true));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html add, post_form(admin, org_path(o.id) + "/domains", field,
                                                         "Add domain", "primary"));
  return html(
      R"(<section aria-labelledby="domains"><h2 id="domains">Domains</h2>{{list}}{{more}}{{add}}</section>)",
      {{"list", list}, {"more", more}, {"add", add}});
}

Result<pages::Html> directories_section(Admin& admin, const Organization& o) {
  scim::DirectoryStore store(admin.db());
  PORTCULLIS_ASSIGN_OR_RETURN(auto page, fetch_list<scim::Directory>(
                                             admin, scim::DirectoryStore::listing(o.id),
                                             [&](const auto& request, const auto& codec) {
                                               return store.list(o.id, request, codec);
                                             },
                                             "directories_"));
  pages::Html rows;
  for (const auto& d : page.items) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html name,
                                link(org_path(o.id) + "/directories/" + d.id, d.name));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html tr, row({name, text(d.last_used_time.empty() ? "never" : d.last_used_time),
                             text(std::to_string(d.live_tokens))}));
    rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table("SCIM directories", {"Name", "Last sync", "Live tokens"}, rows, !page.items.empty(),
            "Create a directory to let the organization's identity provider (Entra ID, Okta) "
            "provision its users and groups over SCIM."));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html more,
                              pager_of(org_path(o.id), "", page, "directories", "directories_"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html field,
                              input_field("directory_name", "Directory name", "SCIM directory"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html add,
      post_form(admin, org_path(o.id) + "/directories", field, "Create SCIM directory", "primary"));
  return html(
      R"(<section aria-labelledby="directories"><h2 id="directories">SCIM directories</h2>{{list}}{{more}}{{add}}</section>)",
      {{"list", list}, {"more", more}, {"add", add}});
}

Result<pages::Html> members_section(Admin& admin, const Organization& o) {
  PORTCULLIS_ASSIGN_OR_RETURN(auto page, fetch_list<organizations::ListedUser>(
                                             admin, organizations::organization_users_listing(o.id),
                                             [&](const auto& request, const auto& codec) {
                                               return organizations::list_organization_users(
                                                   admin.db(), o.id, request, codec);
                                             },
                                             "members_"));
  pages::Html rows;
  for (const auto& u : page.items) {
    std::string roles;
    std::string status;
    std::string by;
    for (const auto& m : u.memberships) {
      for (const auto& r : m.roles) roles += (roles.empty() ? "" : ", ") + r;
      status = m.status;
      by = m.provisioned_by;
    }
    const std::string label = u.user.email.empty() ? u.user.id : u.user.email;
    pages::Html who;
    if (admin.access.environment_admin) {
      PORTCULLIS_ASSIGN_OR_RETURN(who, link("admin/users/" + u.user.id, label));
    } else {
      who = text(label);
    }
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html remove,
        post_form(admin, org_path(o.id) + "/members/" + u.user.id + "/delete", pages::Html(),
                  "Remove", "danger small",
                  "Remove this member from the organization? Their tokens for it are revoked.",
                  "inline"));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html tr, row({who, text(roles.empty() ? "(none)" : roles),
                                                     text(status), text(by), remove}));
    rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table("Members", {"User", "Roles", "Status", "Provisioned by", "Actions"}, rows,
            !page.items.empty(),
            "Members arrive through SCIM, through SSO sign-ins, or are added below by e-mail "
            "address."));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html more,
                              pager_of(org_path(o.id), "", page, "members", "members_"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html email,
      input_field("member_email", "E-mail address of an existing user", "", "email", "", true));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html roles,
      input_field("member_roles", "Roles (comma-separated)", "member", "text",
                  "The role admin makes the user an administrator of this organization here."));
  pages::Html fields;
  fields += email;
  fields += roles;
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html add, post_form(admin, org_path(o.id) + "/members", fields,
                                                         "Add member", "primary"));
  return html(
      R"(<section aria-labelledby="members"><h2 id="members">Members</h2>{{list}}{{more}}{{add}}</section>)",
      {{"list", list}, {"more", more}, {"add", add}});
}

Result<View> show_organization(Admin& admin) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html notice, notice_of(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id, html("<code>{{id}}</code>", {{"id", o.id}}));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html about,
                              facts({{"ID", id},
                                     {"External ID", text(o.external_id.value_or("(none)"))},
                                     {"Created", text(o.create_time)},
                                     {"Updated", text(o.update_time)}}));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html domains, domains_section(admin, o));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html connections, connections_section(admin, o.id));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html directories, directories_section(admin, o));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html members, members_section(admin, o));
  pages::Html manage;
  if (admin.access.environment_admin) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html name, input_field("display_name", "Name", o.display_name, "text", "", true));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html external,
        input_field("external_id", "External ID (optional)", o.external_id.value_or("")));
    pages::Html fields;
    fields += name;
    fields += external;
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html edit, post_form(admin, org_path(o.id), fields, "Save changes", "primary"));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html remove,
        post_form(admin, org_path(o.id) + "/delete", pages::Html(), "Delete organization", "danger",
                  "Delete this organization with its domains, connections, directories and "
                  "memberships? This cannot be undone.",
                  "inline"));
    PORTCULLIS_ASSIGN_OR_RETURN(
        manage,
        html(
            R"(<section aria-labelledby="settings"><h2 id="settings">Settings</h2>{{edit}}</section>
<section aria-labelledby="danger"><h2 id="danger">Delete</h2>{{remove}}</section>)",
            {{"edit", edit}, {"remove", remove}}));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content,
                              html(R"(<p><a href="/admin/organizations">Organizations</a></p>
<h1 id="page-title">{{name}}</h1>
{{notice}}<div class="panel">{{about}}</div>
<p><a href="/admin/events?organization_id={{id}}">This organization's events</a></p>
{{domains}}{{connections}}{{directories}}{{members}}{{manage}})",
                                   {{"name", o.display_name},
                                    {"notice", notice},
                                    {"about", about},
                                    {"id", o.id},
                                    {"domains", domains},
                                    {"connections", connections},
                                    {"directories", directories},
                                    {"members", members},
                                    {"manage", manage}}));
  return View{o.display_name, content, "organizations", 200};
}

Result<http::Response> update_organization(Admin& admin, const http::Form& form) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  PORTCULLIS_RETURN_IF_ERROR(operations::update_organization(admin.ctx, o.id,
                                                             read_organization_form(form),
                                                             {"display_name", "external_id"})
                                 .status());
  return redirect("/" + org_path(o.id) + "?saved=1");
}

Result<http::Response> delete_organization(Admin& admin, const http::Form&) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  PORTCULLIS_RETURN_IF_ERROR(operations::delete_organization(admin.ctx, o.id).status());
  return redirect("/admin/organizations?deleted=1");
}

// ---- members --------------------------------------------------------------------------------

Result<http::Response> add_member(Admin& admin, const http::Form& form) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  const std::string email = form.get_or("member_email", "");
  PORTCULLIS_ASSIGN_OR_RETURN(auto found,
                              identity::UserStore(admin.db()).search_by_email_prefix(email, 2));
  const identity::User* user = nullptr;
  for (const auto& u : found) {
    if (identity::email_key(u.email) == identity::email_key(email)) user = &u;
  }
  if (email.empty() || !user) {
    return Status::invalid_argument("There is no user with the address " + email +
                                    ". Users are created by their first sign-in, by SCIM, or "
                                    "through the API.");
  }
  organizations::MembershipFields fields;
  std::string roles = form.get_or("member_roles", "");
  size_t start = 0;
  while (start <= roles.size()) {
    size_t comma = roles.find(',', start);
    std::string r =
        roles.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    r.erase(0, r.find_first_not_of(" \t"));
    r.erase(r.find_last_not_of(" \t") + 1);
    if (!r.empty()) fields.roles.push_back(r);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  PORTCULLIS_RETURN_IF_ERROR(
      operations::put_membership(admin.ctx, o.id, user->id, fields).status());
  return redirect("/" + org_path(o.id) + "?member_added=1#members");
}

Result<http::Response> remove_member(Admin& admin, const http::Form&) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  PORTCULLIS_RETURN_IF_ERROR(
      operations::remove_membership(admin.ctx, o.id, admin.request().path_param("user_id")));
  return redirect("/" + org_path(o.id) + "?member_removed=1#members");
}

// ---- domains --------------------------------------------------------------------------------

Result<View> domain_view(Admin& admin, const Organization& o, const domains::Domain& d,
                         const std::string& error) {
  pages::Html alert;
  if (!error.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(alert, message("alert", "The domain is not verified: " + error));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html notice, notice_of(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html status,
      html(R"(<span class="badge">{{s}}</span>)",
           {{"s", d.verified ? "verified by " + d.verified_by + " at " + d.verify_time
                             : "pending verification"}}));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html about,
      facts({{"Domain", text(d.domain)}, {"Status", status}, {"Added", text(d.create_time)}}));
  pages::Html verify;
  if (!d.verified) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html name, copyable(domains::verification_record_name(d.domain), "record name"));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html value,
        copyable(domains::verification_record_value(d.verification_token), "record value"));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html record,
                                facts({{"Type", text("TXT")}, {"Name", name}, {"Value", value}}));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html method,
                                html(R"(<input type="hidden" name="method" value="dns">)", {}));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html check, post_form(admin, org_path(o.id) + "/domains/" + d.id + "/verify", method,
                                     "Verify now", "primary", "", "inline"));
    pages::Html by_word;
    if (admin.access.environment_admin) {
      PORTCULLIS_ASSIGN_OR_RETURN(pages::Html admin_method,
                                  html(R"(<input type="hidden" name="method" value="admin">)", {}));
      PORTCULLIS_ASSIGN_OR_RETURN(
          pages::Html form,
          post_form(admin, org_path(o.id) + "/domains/" + d.id + "/verify", admin_method,
                    "Mark verified without a DNS check", "secondary",
                    "Mark this domain verified on your word, without DNS? Do this only when you "
                    "know the organization controls it.",
                    "inline"));
      PORTCULLIS_ASSIGN_OR_RETURN(
          by_word, html(R"(<h3>Without DNS</h3>
<p>{{local}}An environment administrator may mark the domain verified without the DNS check
(the API's <code>"method": "admin"</code>); the event records that it was done this way.</p>{{form}})",
                        {{"local", admin.config().is_local()
                                       ? "Local mode: DNS lookups go to " +
                                             admin.config().dns_nameserver.describe() +
                                             ", which usually cannot hold your record. "
                                       : std::string()},
                         {"form", form}}));
    }
    PORTCULLIS_ASSIGN_OR_RETURN(
        verify,
        html(R"(<section aria-labelledby="publish"><h2 id="publish">Publish this DNS record</h2>
<p>Ask the organization to add this TXT record at their DNS host, then verify. Portcullis asks
{{ns}} for it.</p>
<div class="panel">{{record}}</div>
<div class="actions">{{check}}</div>
{{by_word}}</section>)",
             {{"ns", admin.config().dns_nameserver.describe()},
              {"record", record},
              {"check", check},
              {"by_word", by_word}}));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html remove,
      post_form(admin, org_path(o.id) + "/domains/" + d.id + "/delete", pages::Html(),
                "Remove domain", "danger",
                "Remove this domain? Sign-ins from it no longer go to the organization's SSO.",
                "inline"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content,
                              html(R"(<p><a href="/{{org_path}}">{{org}}</a></p>
<h1 id="page-title">{{domain}}</h1>
{{alert}}{{notice}}<div class="panel">{{about}}</div>
{{verify}}
<section aria-labelledby="danger"><h2 id="danger">Remove</h2>{{remove}}</section>)",
                                   {{"org_path", org_path(o.id)},
                                    {"org", o.display_name},
                                    {"domain", d.domain},
                                    {"alert", alert},
                                    {"notice", notice},
                                    {"about", about},
                                    {"verify", verify},
                                    {"remove", remove}}));
  return View{d.domain, content, "organizations", error.empty() ? 200 : 400};
}

Result<View> show_domain(Admin& admin) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(
      domains::Domain d,
      domains::DomainStore(admin.db()).get(o.id, admin.request().path_param("domain_id")));
  return domain_view(admin, o, d, "");
}

Result<http::Response> add_domain(Admin& admin, const http::Form& form) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(
      domains::Domain d, operations::create_domain(admin.ctx, o.id, form.get_or("domain", "")));
  return redirect("/" + org_path(o.id) + "/domains/" + d.id);
}

Result<http::Response> verify_domain(Admin& admin, const http::Form& form) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  const std::string domain_id = admin.request().path_param("domain_id");
  domains::VerifiedBy by = domains::VerifiedBy::kDns;
  if (form.get_or("method", "dns") == "admin") {
    // On an administrator's word: environment administrators only, or an organization could
    // claim any domain it likes.
    PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
    by = domains::VerifiedBy::kAdmin;
  }
  auto verified = operations::verify_domain(admin.ctx, o.id, domain_id, by);
  if (!verified) {
    if (verified.status().code() != Code::kFailedPrecondition) return verified.status();
    PORTCULLIS_ASSIGN_OR_RETURN(domains::Domain d,
                                domains::DomainStore(admin.db()).get(o.id, domain_id));
    PORTCULLIS_ASSIGN_OR_RETURN(View v, domain_view(admin, o, d, verified.status().message()));
    return render(admin, v);
  }
  return redirect("/" + org_path(o.id) + "/domains/" + domain_id + "?verified=1");
}

Result<http::Response> remove_domain(Admin& admin, const http::Form&) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  PORTCULLIS_RETURN_IF_ERROR(
      operations::delete_domain(admin.ctx, o.id, admin.request().path_param("domain_id")));
  return redirect("/" + org_path(o.id) + "?domain_removed=1#domains");
}

// ---- SCIM directories -----------------------------------------------------------------------

Result<View> directory_view(Admin& admin, const Organization& o, const scim::Directory& d,
                            const std::string& token) {
  pages::Html shown;
  if (!token.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html value, copyable(token, "bearer token"));
    PORTCULLIS_ASSIGN_OR_RETURN(
        shown,
        html(
            R"(<div class="warning" role="status"><p><strong>Copy this bearer token now: it is not shown again.</strong>
Give it to the identity provider with the SCIM base URL below.</p>{{value}}</div>)",
            {{"value", value}}));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html base,
                              copyable(admin.config().base_url + "/scim/v2", "SCIM base URL"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id, html("<code>{{id}}</code>", {{"id", d.id}}));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html about,
      facts({{"ID", id},
             {"SCIM base URL", base},
             {"Last sync", text(d.last_used_time.empty() ? "never (the identity provider has not "
                                                           "called yet)"
                                                         : d.last_used_time)},
             {"Live tokens", text(std::to_string(d.live_tokens) + " (at most two; a rotation "
                                                                  "revokes the older)")},
             {"Created", text(d.create_time)}}));
  events::EventFilter filter;
  filter.organization_id = o.id;
  for (const auto* t : events::all_types()) {
    if (t->name.rfind("scim.", 0) == 0 || t->name.rfind("directory.", 0) == 0) {
      filter.types.emplace_back(t->name);
    }
  }
  PORTCULLIS_ASSIGN_OR_RETURN(auto recent, recent_events(admin, filter, 20));
  std::vector<Json::Value> mine;
  for (auto& e : recent) {
    if (e["data"].get("directory_id", "").asString() == d.id) mine.push_back(std::move(e));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html activity,
      events_table(admin, mine, "Recent SCIM activity",
                   "Nothing yet. Once the identity provider has the base URL and token, its "
                   "first provisioning cycle shows here."));
  const std::string path = org_path(o.id) + "/directories/" + d.id;
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html rotate,
      post_form(admin, path + "/tokens", pages::Html(), "Rotate token", "secondary",
                "Issue a new token? With two live tokens, the older one stops working.", "inline"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html remove,
      post_form(admin, path + "/delete", pages::Html(), "Delete directory", "danger",
                "Delete this directory? Its tokens stop working at once.", "inline"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content,
                              html(R"(<p><a href="/{{org_path}}">{{org}}</a></p>
<h1 id="page-title">{{name}}</h1>
{{shown}}<div class="panel">{{about}}</div>
<div class="actions">{{rotate}}</div>
{{activity}}
<section aria-labelledby="danger"><h2 id="danger">Delete</h2>{{remove}}</section>)",
                                   {{"org_path", org_path(o.id)},
                                    {"org", o.display_name},
                                    {"name", d.name},
                                    {"shown", shown},
                                    {"about", about},
                                    {"rotate", rotate},
                                    {"activity", activity},
                                    {"remove", remove}}));
  return View{d.name, content, "organizations", 200};
}

Result<View> show_directory(Admin& admin) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(
      scim::Directory d,
      scim::DirectoryStore(admin.db()).get(o.id, admin.request().path_param("directory_id")));
  return directory_view(admin, o, d, "");
}

Result<http::Response> create_directory(Admin& admin, const http::Form& form) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  std::string name = form.get_or("directory_name", "");
  if (name.empty()) name = "SCIM directory";
  PORTCULLIS_ASSIGN_OR_RETURN(auto created, operations::create_directory(admin.ctx, o.id, name));
  PORTCULLIS_ASSIGN_OR_RETURN(View v,
                              directory_view(admin, o, created.first, created.second.token));
  v.status = 201;
  return render(admin, v);
}

Result<http::Response> rotate_directory_token(Admin& admin, const http::Form&) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  const std::string id = admin.request().path_param("directory_id");
  PORTCULLIS_ASSIGN_OR_RETURN(scim::IssuedToken token,
                              operations::rotate_directory_token(admin.ctx, o.id, id));
  PORTCULLIS_ASSIGN_OR_RETURN(scim::Directory d, scim::DirectoryStore(admin.db()).get(o.id, id));
  PORTCULLIS_ASSIGN_OR_RETURN(View v, directory_view(admin, o, d, token.token));
  return render(admin, v);
}

Result<http::Response> delete_directory(Admin& admin, const http::Form&) {
  PORTCULLIS_ASSIGN_OR_RETURN(Organization o, path_organization(admin));
  PORTCULLIS_RETURN_IF_ERROR(
      operations::delete_directory(admin.ctx, o.id, admin.request().path_param("directory_id")));
  return redirect("/" + org_path(o.id) + "?directory_deleted=1#directories");
}

}  // namespace

void install_organization_pages(server::App& app) {
  const std::string org = "/admin/organizations/{organization_id}";
  add_page(app, "/admin/organizations", list_organizations);
  add_form(app, "/admin/organizations", create_organization);
  add_page(app, org, show_organization);
  add_form(app, org, update_organization);
  add_form(app, org + "/delete", delete_organization);
  add_form(app, org + "/members", add_member);
  add_form(app, org + "/members/{user_id}/delete", remove_member);
  add_form(app, org + "/domains", add_domain);
  add_page(app, org + "/domains/{domain_id}", show_domain);
  add_form(app, org + "/domains/{domain_id}/verify", verify_domain);
  add_form(app, org + "/domains/{domain_id}/delete", remove_domain);
  add_form(app, org + "/directories", create_directory);
  add_page(app, org + "/directories/{directory_id}", show_directory);
  add_form(app, org + "/directories/{directory_id}/tokens", rotate_directory_token);
  add_form(app, org + "/directories/{directory_id}/delete", delete_directory);
}

}  // namespace portcullis::admin_worker
