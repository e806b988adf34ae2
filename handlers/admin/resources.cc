// /admin/resources: the MCP servers this environment protects (the API's /resources), and the
// clients registered to each, with revoke.
#include "clients/resources.h"

#include "clients/clients.h"
#include "listing.h"
#include "operations/resources.h"
#include "pages.h"
#include "widgets.h"

namespace portcullis::admin_worker {
namespace {

std::string scopes_text(const std::vector<oauth::ScopeDef>& scopes) {
  std::string out;
  for (const auto& s : scopes) {
    out += s.name;
    if (!s.description.empty()) out += " " + s.description;
    out += "\n";
  }
  return out;
}

// One scope a line: its name, then (after a space) its description.
std::vector<oauth::ScopeDef> parse_scopes(const std::string& text) {
  std::vector<oauth::ScopeDef> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string line =
        text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.pop_back();
    }
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos) {
      line = line.substr(first);
      size_t space = line.find_first_of(" \t");
      std::string name = line.substr(0, space);
      std::string description;
      if (space != std::string::npos) {
        size_t d = line.find_first_not_of(" \t", space);
        if (d != std::string::npos) description = line.substr(d);
      }
      out.push_back(oauth::ScopeDef{name, description});
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

Result<int> parse_ttl(const std::string& text) {
  if (text.empty() || text.size() > 6) {
    return Status::invalid_argument("The token lifetime must be a number of seconds.");
  }
  for (char c : text) {
    if (c < '0' || c > '9') {
      return Status::invalid_argument("The token lifetime must be a number of seconds.");
    }
  }
  return std::stoi(text);
}

// The resource form's fields as the store takes them; `changed` gets the API's field names.
Result<oauth::ResourceFields> read_form(const http::Form& form, std::vector<std::string>& changed) {
  oauth::ResourceFields f;
  f.name = form.get_or("name", "");
  f.server_url = form.get_or("server_url", "");
  f.dcr_enabled = form.get_or("dcr_enabled", "") == "1";
  f.cimd_enabled = form.get_or("cimd_enabled", "") == "1";
  PORTCULLIS_ASSIGN_OR_RETURN(f.access_token_ttl_seconds,
                              parse_ttl(form.get_or("access_token_ttl_seconds", "")));
  f.scopes = parse_scopes(form.get_or("scopes", ""));
  changed = {"name",  "server_url", "dcr_enabled", "cimd_enabled", "access_token_ttl_seconds",
             "scopes"};
  if (auto alg = form.get("access_token_signing_alg")) {
    PORTCULLIS_ASSIGN_OR_RETURN(f.access_token_signing_alg,
                                oauth::parse_access_token_signing_alg(*alg));
    changed.push_back("access_token_signing_alg");
  }
  return f;
}

constexpr const char* kTtlHelp =
    "Seconds, 60 to 86,400. Between 300 and 3,600 (5 to 60 minutes) is recommended: shorter "
    "makes clients refresh very often, longer keeps a leaked token usable for that long.";
constexpr const char* kAlgHelp =
    "How its access tokens are signed. RS256 is understood by every JWT library; ES256 and "
    "EdDSA sign many times faster and make shorter tokens, and the MCP server's validator "
    "must support them (the keys are published in /keys either way).";
constexpr const char* kScopesHelp =
    "One scope a line: its name (for example todo:read), a space, then the description shown "
    "on the consent page.";

Result<pages::Html> resource_fields(const oauth::Resource& r) {
  pages::Html f;
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html name,
      input_field("name", "Name", r.name, "text", "Shown to users on the consent page.", true));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html url,
      input_field("server_url", "Server URL", r.server_url, "url",
                  "The MCP server's URL: the audience of its tokens (https; http only for "
                  "localhost).",
                  true));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html dcr, checkbox("dcr_enabled", "Dynamic client registration (DCR)", r.dcr_enabled,
                                "MCP clients may register themselves (RFC 7591)."));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html cimd,
      checkbox("cimd_enabled", "Client ID metadata documents (CIMD)", r.cimd_enabled,
               "MCP clients may identify themselves by a URL of their metadata document."));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html ttl,
      input_field("access_token_ttl_seconds", "Access token lifetime (seconds)",
                  std::to_string(r.access_token_ttl_seconds), "number", kTtlHelp, true));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html alg, select_field("access_token_signing_alg", "Access token signing algorithm",
                                    {{"RS256", "RS256 (RSA 2048, the default)"},
                                     {"ES256", "ES256 (ECDSA P-256)"},
                                     {"EdDSA", "EdDSA (Ed25519)"}},
                                    std::string(jose::alg_name(r.access_token_signing_alg))));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html alg_help,
      html(R"(<p class="help" id="access_token_signing_alg-help">{{h}}</p>)", {{"h", kAlgHelp}}));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html scopes, textarea_field("scopes", "Scopes", scopes_text(r.scopes), kScopesHelp));
  f += name;
  f += url;
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html switches,
      html(R"(<fieldset><legend>Client registration</legend>{{dcr}}{{cimd}}</fieldset>)",
           {{"dcr", dcr}, {"cimd", cimd}}));
  f += switches;
  f += ttl;
  f += alg;
  f += alg_help;
  f += scopes;
  return f;
}

Result<pages::Html> warnings_of(const oauth::Resource& r) {
  pages::Html out;
  for (const auto& w : oauth::resource_warnings(r)) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html m, message("warning", "Warning: " + w + "."));
    out += m;
  }
  return out;
}

Result<View> list_resources(Admin& admin) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  oauth::ResourceStore store = operations::resource_store(admin.ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(
      auto page, fetch_list<oauth::Resource>(admin, oauth::ResourceStore::listing(),
                                             [&](const auto& request, const auto& codec) {
                                               return store.list(request, codec);
                                             }));
  pages::Html rows;
  for (const auto& r : page.items) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html name, link("admin/resources/" + r.id, r.name));
    std::string registration = std::string(r.dcr_enabled ? "DCR" : "") +
                               (r.dcr_enabled && r.cimd_enabled ? ", " : "") +
                               (r.cimd_enabled ? "CIMD" : "");
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html tr, row({name, text(r.server_url),
                             text(registration.empty() ? "pre-registered only" : registration),
                             text(std::to_string(r.access_token_ttl_seconds) + " s"),
                             text(std::string(jose::alg_name(r.access_token_signing_alg))),
                             text(std::to_string(r.scopes.size()))}));
    rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table("Resources",
            {"Name", "Server URL", "Registration", "Token lifetime", "Token signing", "Scopes"},
            rows, !page.items.empty(),
            "Register the first MCP server below: its name, its URL and the scopes it checks."));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html more, pager_of("admin/resources", "", page, "resources"));
  oauth::Resource blank;
  blank.scopes = {};
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html fields, resource_fields(blank));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html create, post_form(admin, "admin/resources", fields,
                                                            "Register resource", "primary"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content,
                              html(R"(<h1 id="page-title">Resources</h1>
<p class="muted">The MCP servers this environment issues tokens for.</p>
{{list}}{{more}}
<section aria-labelledby="new-resource"><h2 id="new-resource">Register a resource</h2>{{create}}</section>)",
                                   {{"list", list}, {"more", more}, {"create", create}}));
  return View{"Resources", content, "resources", 200};
}

Result<http::Response> create_resource(Admin& admin, const http::Form& form) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  std::vector<std::string> changed;
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::ResourceFields fields, read_form(form, changed));
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource r, operations::create_resource(admin.ctx, fields));
  return redirect("/admin/resources/" + r.id + "?created=1");
}

Result<pages::Html> clients_section(Admin& admin, const oauth::Resource& r) {
  oauth::ClientStore clients(admin.db());
  PORTCULLIS_ASSIGN_OR_RETURN(auto page, fetch_list<oauth::RegisteredClient>(
                                             admin, oauth::ClientStore::listing(r.id),
                                             [&](const auto& request, const auto& codec) {
                                               return clients.list(r.id, request, codec);
                                             },
                                             "clients_"));
  pages::Html rows;
  for (const auto& c : page.items) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html revoke,
        post_form(admin, "admin/resources/" + r.id + "/clients/" + c.client_id + "/delete",
                  pages::Html(), "Revoke", "danger small",
                  "Revoke this client? Its tokens stop working and it must register again.",
                  "inline"));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id,
                                html(R"(<code>{{id}}</code>)", {{"id", c.client_id}}));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html tr,
        row({text(c.metadata.client_name.empty() ? "(no name)" : c.metadata.client_name), id,
             text(c.kind == oauth::ClientInfo::Kind::kDcr ? "DCR" : "pre-registered"),
             text(c.create_time), text(c.last_used_time.empty() ? "never" : c.last_used_time),
             revoke}));
    rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table("Registered clients",
            {"Name", "Client ID", "Registration", "Registered", "Last used", "Actions"}, rows,
            !page.items.empty(),
            "MCP clients appear here when they register (DCR) or are registered through the API. "
            "Clients identified by a metadata document URL (CIMD) are not stored here."));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html more,
                              pager_of("admin/resources/" + r.id, "", page, "clients", "clients_"));
  return html(
      R"(<section aria-labelledby="clients"><h2 id="clients">Registered clients</h2>{{list}}{{more}}</section>)",
      {{"list", list}, {"more", more}});
}

Result<View> show_resource(Admin& admin) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource r, operations::resource_store(admin.ctx).get(
                                                     admin.request().path_param("resource_id")));
  pages::Html notice;
  if (admin.request().query.has("created")) {
    PORTCULLIS_ASSIGN_OR_RETURN(notice, message("notice", "The resource was registered."));
  } else if (admin.request().query.has("saved")) {
    PORTCULLIS_ASSIGN_OR_RETURN(notice, message("notice", "Your changes were saved."));
  } else if (admin.request().query.has("revoked")) {
    PORTCULLIS_ASSIGN_OR_RETURN(notice, message("notice", "The client was revoked."));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html warnings, warnings_of(r));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html issuer, copyable(r.issuer(admin.config()), "issuer"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html prm,
                              copyable(admin.config().base_url + "/resources/" + r.id +
                                           "/.well-known/oauth-protected-resource",
                                       "protected resource metadata URL"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id, html("<code>{{id}}</code>", {{"id", r.id}}));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html about, facts({{"ID", id},
                                {"Issuer", issuer},
                                {"Protected resource metadata", prm},
                                {"Access token signing algorithm",
                                 text(std::string(jose::alg_name(r.access_token_signing_alg)))},
                                {"Created", text(r.create_time)},
                                {"Updated", text(r.update_time)}}));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html fields, resource_fields(r));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html edit, post_form(admin, "admin/resources/" + r.id, fields,
                                                          "Save changes", "primary"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html clients, clients_section(admin, r));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html remove,
      post_form(admin, "admin/resources/" + r.id + "/delete", pages::Html(), "Delete resource",
                "danger",
                "Delete this resource? Every client registered to it and every token it issued "
                "stop working.",
                "inline"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content,
                              html(R"(<p><a href="/admin/resources">Resources</a></p>
<h1 id="page-title">{{name}}</h1>
{{notice}}{{warnings}}
<div class="panel">{{about}}</div>
<section aria-labelledby="settings"><h2 id="settings">Settings</h2>{{edit}}</section>
{{clients}}
<section aria-labelledby="danger"><h2 id="danger">Delete</h2>
<p>Deleting the resource removes its clients and ends every grant to it.</p>{{remove}}</section>)",
                                   {{"name", r.name},
                                    {"notice", notice},
                                    {"warnings", warnings},
                                    {"about", about},
                                    {"edit", edit},
                                    {"clients", clients},
                                    {"remove", remove}}));
  return View{r.name, content, "resources", 200};
}

Result<http::Response> update_resource(Admin& admin, const http::Form& form) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  std::vector<std::string> changed;
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::ResourceFields fields, read_form(form, changed));
  PORTCULLIS_ASSIGN_OR_RETURN(
      oauth::Resource r,
      operations::update_resource(admin.ctx, admin.request().path_param("resource_id"), fields,
                                  changed));
  return redirect("/admin/resources/" + r.id + "?saved=1");
}

Result<http::Response> delete_resource(Admin& admin, const http::Form&) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  PORTCULLIS_RETURN_IF_ERROR(
      operations::delete_resource(admin.ctx, admin.request().path_param("resource_id")).status());
  return redirect("/admin/resources?deleted=1");
}

Result<http::Response> revoke_client(Admin& admin, const http::Form&) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(oauth::Resource r, operations::resource_store(admin.ctx).get(
                                                     admin.request().path_param("resource_id")));
  PORTCULLIS_RETURN_IF_ERROR(
      operations::delete_resource_client(admin.ctx, r, admin.request().path_param("client_id")));
  return redirect("/admin/resources/" + r.id + "?revoked=1");
}

}  // namespace

void install_resource_pages(server::App& app) {
  add_page(app, "/admin/resources", list_resources);
  add_form(app, "/admin/resources", create_resource);
  add_page(app, "/admin/resources/{resource_id}", show_resource);
  add_form(app, "/admin/resources/{resource_id}", update_resource);
  add_form(app, "/admin/resources/{resource_id}/delete", delete_resource);
  add_form(app, "/admin/resources/{resource_id}/clients/{client_id}/delete", revoke_client);
}

}  // namespace portcullis::admin_worker
