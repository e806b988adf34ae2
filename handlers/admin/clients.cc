// /admin/clients: management API clients (the API's /clients): create with scopes (the secret
// is shown once), delete.
#include "listing.h"
#include "management/scopes.h"
#include "operations/management.h"
#include "pages.h"
#include "widgets.h"

namespace portcullis::admin_worker {
namespace {

Result<pages::Html> clients_table(Admin& admin, const paging::Page<management::ApiClient>& page) {
  pages::Html rows;
  for (const auto& c : page.items) {
    std::string scopes;
    for (const auto& s : c.scopes) scopes += (scopes.empty() ? "" : " ") + s;
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id, html("<code>{{id}}</code>", {{"id", c.id}}));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html remove,
        post_form(
            admin, "admin/clients/" + c.id + "/delete", pages::Html(), "Delete", "danger small",
            "Delete this API client? Whatever uses its credentials stops working.", "inline"));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html tr,
                                row({text(c.name), id, text(scopes), text(c.create_time), remove}));
    rows += tr;
  }
  return table("API clients", {"Name", "Client ID", "Scopes", "Created", "Actions"}, rows,
               !page.items.empty(),
               "Create a client below for each system that calls the management API, with only "
               "the scopes it needs.");
}

Result<View> clients_view(Admin& admin, const std::string& created_id, const std::string& secret) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  management::ApiClientStore store(admin.db());
  PORTCULLIS_ASSIGN_OR_RETURN(
      auto page, fetch_list<management::ApiClient>(admin, management::ApiClientStore::listing(),
                                                   [&](const auto& request, const auto& codec) {
                                                     return store.list(request, codec);
                                                   }));
  pages::Html shown;
  if (!secret.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id, copyable(created_id, "client ID"));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html value, copyable(secret, "client secret"));
    PORTCULLIS_ASSIGN_OR_RETURN(
        shown,
        html(
            R"(<div class="warning" role="status"><p><strong>Copy the client secret now: it is not shown again.</strong>
The client gets tokens at the token endpoint with these credentials (client_credentials grant).</p>
<p>Client ID</p>{{id}}<p>Client secret</p>{{value}}</div>)",
            {{"id", id}, {"value", value}}));
  } else if (admin.request().query.has("deleted")) {
    PORTCULLIS_ASSIGN_OR_RETURN(shown, message("notice", "The API client was deleted."));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html list, clients_table(admin, page));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html more, pager_of("admin/clients", "", page, "clients"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html name,
                              input_field("client_name", "Name", "", "text",
                                          "What uses it, for example Directory sync.", true));
  pages::Html boxes;
  for (const auto& s : management::all_scopes()) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html box,
        html(
            R"(<label class="check"><input type="checkbox" name="scope" value="{{s}}"> <code>{{s}}</code></label>)",
            {{"s", s}}));
    boxes += box;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html scopes,
      html(R"(<fieldset><legend>Scopes</legend>{{boxes}}</fieldset>)", {{"boxes", boxes}}));
  pages::Html fields;
  fields += name;
  fields += scopes;
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html create, post_form(admin, "admin/clients", fields,
                                                            "Create API client", "primary"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html content,
      html(R"(<h1 id="page-title">API clients</h1>
<p class="muted">Credentials for the management API (<code>/api/v1</code>).</p>
{{shown}}{{list}}{{more}}
<section aria-labelledby="new-client"><h2 id="new-client">Create an API client</h2>{{create}}</section>)",
           {{"shown", shown}, {"list", list}, {"more", more}, {"create", create}}));
  return View{"API clients", content, "clients", secret.empty() ? 200 : 201};
}

Result<View> list_clients(Admin& admin) {
  return clients_view(admin, "", "");
}

Result<http::Response> create_client(Admin& admin, const http::Form& form) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  std::vector<std::string> scopes;
  for (const auto& [k, v] : form.all()) {
    if (k == "scope") scopes.push_back(v);
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      management::NewApiClient created,
      operations::create_api_client(admin.ctx, form.get_or("client_name", ""), scopes));
  PORTCULLIS_ASSIGN_OR_RETURN(View v, clients_view(admin, created.client.id, created.secret));
  return render(admin, v);
}

Result<http::Response> delete_client(Admin& admin, const http::Form&) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  PORTCULLIS_RETURN_IF_ERROR(
      operations::delete_api_client(admin.ctx, admin.request().path_param("client_id")));
  return redirect("/admin/clients?deleted=1");
}

}  // namespace

void install_client_pages(server::App& app) {
  add_page(app, "/admin/clients", list_clients);
  add_form(app, "/admin/clients", create_client);
  add_form(app, "/admin/clients/{client_id}/delete", delete_client);
}

}  // namespace portcullis::admin_worker
