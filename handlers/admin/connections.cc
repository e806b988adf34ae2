// SSO connections of an organization (the API's /organizations/{id}/connections): the section
// on the organization's page, and /admin/organizations/{id}/connections/{id} — upload the IdP's
// metadata, download this service provider's, test the connection and see why it fails,
// activate, deactivate, delete.
#include "operations/connections.h"

#include "listing.h"
#include "pages.h"
#include "widgets.h"

namespace portcullis::admin_worker {
namespace {

std::string connection_path(const std::string& org, const std::string& id) {
  return "admin/organizations/" + org + "/connections/" + id;
}

// The connection of the path, when the administrator may see its organization.
Result<sso::Connection> path_connection(Admin& admin) {
  const std::string org = admin.request().path_param("organization_id");
  PORTCULLIS_RETURN_IF_ERROR(require_organization(admin, org));
  return operations::connection_store(admin.ctx).get(org,
                                                     admin.request().path_param("connection_id"));
}

Result<View> connection_view(Admin& admin, sso::Connection& c, const std::string& outcome_kind,
                             const std::string& outcome) {
  const Json::Value v = sso::to_json(c, admin.config().base_url);
  pages::Html result;
  if (!outcome.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(result, message(outcome_kind, outcome));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id, html("<code>{{id}}</code>", {{"id", c.id}}));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html state,
                              html(R"(<span class="badge">{{s}}</span>)", {{"s", c.state}}));
  std::vector<std::pair<std::string, pages::Html>> items = {
      {"ID", id},
      {"Type", text(c.type == "saml" ? "SAML 2.0" : "OpenID Connect")},
      {"State", state}};
  const std::string path = connection_path(c.organization_id, c.id);
  pages::Html idp_form;
  if (c.type == "saml") {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html entity,
                                copyable(v["sp_entity_id"].asString(), "SP entity ID"));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html acs, copyable(v["sp_acs_url"].asString(), "ACS URL"));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html download,
        html(
            R"(<a href="/sso/saml/{{id}}/metadata" download="portcullis-sp-metadata.xml">Download SP metadata (XML)</a>)",
            {{"id", c.id}}));
    items.emplace_back("SP entity ID", entity);
    items.emplace_back("ACS URL", acs);
    items.emplace_back("SP metadata", download);
    items.emplace_back("IdP entity ID",
                       text(c.idp_entity_id.empty() ? "(from metadata)" : c.idp_entity_id));
    items.emplace_back(
        "IdP metadata",
        text(!c.idp_metadata_xml.empty()
                 ? "uploaded (" + std::to_string(c.idp_metadata_xml.size()) + " bytes)"
                 : (!c.idp_metadata_url.empty() ? c.idp_metadata_url : "none")));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html xml,
        textarea_field("idp_metadata_xml", "IdP metadata XML", "",
                       "Paste the metadata document your identity provider offers (Entra ID: "
                       "Federation Metadata XML; Okta: the IdP metadata)."));
    PORTCULLIS_ASSIGN_OR_RETURN(
        idp_form, post_form(admin, path + "/metadata", xml, "Upload IdP metadata", "secondary"));
  } else {
    items.emplace_back("Issuer", text(c.issuer));
    items.emplace_back("Client ID", text(c.client_id));
    items.emplace_back("Client secret", text(c.has_client_secret ? "set" : "not set"));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html redirect_uri,
                                copyable(v["redirect_uri"].asString(), "redirect URI"));
    items.emplace_back("Redirect URI", redirect_uri);
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html about, facts(items));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html test,
                              post_form(admin, path + "/test", pages::Html(), "Test connection",
                                        "secondary", "", "inline"));
  pages::Html toggle;
  if (c.state == "active") {
    PORTCULLIS_ASSIGN_OR_RETURN(
        toggle, post_form(admin, path + "/deactivate", pages::Html(), "Deactivate", "secondary",
                          "Deactivate this connection? Its users cannot sign in "
                          "through it until it is active again.",
                          "inline"));
  } else {
    PORTCULLIS_ASSIGN_OR_RETURN(toggle, post_form(admin, path + "/activate", pages::Html(),
                                                  "Activate", "primary", "", "inline"));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html remove,
      post_form(admin, path + "/delete", pages::Html(), "Delete connection", "danger",
                "Delete this connection? Its users can no longer sign in through it.", "inline"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content,
                              html(R"(<p><a href="/admin/organizations/{{org}}">Organization</a></p>
<h1 id="page-title">{{name}}</h1>
{{result}}<div class="panel">{{about}}</div>
<div class="actions">{{test}}{{toggle}}</div>
{{idp_form}}
<section aria-labelledby="danger"><h2 id="danger">Delete</h2>{{remove}}</section>)",
                                   {{"org", c.organization_id},
                                    {"name", c.name},
                                    {"result", result},
                                    {"about", about},
                                    {"test", test},
                                    {"toggle", toggle},
                                    {"idp_form", idp_form},
                                    {"remove", remove}}));
  return View{c.name, content, "organizations", outcome_kind == "alert" ? 400 : 200};
}

Result<View> show_connection(Admin& admin) {
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c, path_connection(admin));
  std::string note;
  if (admin.request().query.has("created"))
    note = "The connection was created as a draft. Test it, then activate it.";
  if (admin.request().query.has("saved")) note = "Your changes were saved.";
  return connection_view(admin, c, "notice", note);
}

Result<http::Response> create_connection(Admin& admin, const http::Form& form) {
  const std::string org = admin.request().path_param("organization_id");
  PORTCULLIS_RETURN_IF_ERROR(require_organization(admin, org));
  Json::Value body(Json::objectValue);
  const std::string type = form.get_or("connection_type", "saml");
  body["type"] = type;
  body["name"] = form.get_or("connection_name", "");
  if (type == "saml") {
    if (auto xml = form.get("idp_metadata_xml"); xml && !xml->empty())
      body["idp_metadata_xml"] = *xml;
    if (auto url = form.get("idp_metadata_url"); url && !url->empty())
      body["idp_metadata_url"] = *url;
  } else {
    body["issuer"] = form.get_or("issuer", "");
    body["client_id"] = form.get_or("oidc_client_id", "");
    if (auto secret = form.get("oidc_client_secret"); secret && !secret->empty()) {
      body["client_secret"] = *secret;
    }
  }
  sso::Connection c;
  c.organization_id = org;
  std::optional<std::string> secret;
  PORTCULLIS_RETURN_IF_ERROR(sso::apply_body(body, false, c, secret));
  PORTCULLIS_RETURN_IF_ERROR(operations::create_connection(admin.ctx, c, secret));
  return redirect("/" + connection_path(org, c.id) + "?created=1");
}

// Applies `body` as the API's PATCH does; a refused activation shows the reason on the page.
Result<http::Response> patch_connection(Admin& admin, const Json::Value& body) {
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c, path_connection(admin));
  const std::string was = c.state;
  std::optional<std::string> secret;
  PORTCULLIS_RETURN_IF_ERROR(sso::apply_body(body, true, c, secret));
  Status st = operations::update_connection(admin.ctx, c, was, secret);
  if (!st.is_ok()) {
    if (st.code() != Code::kFailedPrecondition && st.code() != Code::kInvalidArgument) return st;
    PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection stored, path_connection(admin));
    PORTCULLIS_ASSIGN_OR_RETURN(
        View v, connection_view(admin, stored, "alert",
                                "Not changed: the connection does not work yet: " + st.message()));
    return render(admin, v);
  }
  return redirect("/" + connection_path(c.organization_id, c.id) + "?saved=1");
}

Result<http::Response> activate(Admin& admin, const http::Form&) {
  Json::Value body(Json::objectValue);
  body["state"] = "active";
  return patch_connection(admin, body);
}

Result<http::Response> deactivate(Admin& admin, const http::Form&) {
  Json::Value body(Json::objectValue);
  body["state"] = "inactive";
  return patch_connection(admin, body);
}

Result<http::Response> upload_metadata(Admin& admin, const http::Form& form) {
  Json::Value body(Json::objectValue);
  body["idp_metadata_xml"] = form.get_or("idp_metadata_xml", "");
  return patch_connection(admin, body);
}

Result<http::Response> test(Admin& admin, const http::Form&) {
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c, path_connection(admin));
  sso::Connection tested = c;
  Status st = operations::test_connection(admin.ctx, tested);
  if (!st.is_ok() && st.code() != Code::kFailedPrecondition &&
      st.code() != Code::kInvalidArgument) {
    return st;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      View v, connection_view(admin, c, st.is_ok() ? "notice" : "alert",
                              st.is_ok() ? "The connection works: it can be activated."
                                         : "The test failed: " + st.message()));
  v.status = 200;
  return render(admin, v);
}

Result<http::Response> remove(Admin& admin, const http::Form&) {
  PORTCULLIS_ASSIGN_OR_RETURN(sso::Connection c, path_connection(admin));
  PORTCULLIS_RETURN_IF_ERROR(operations::delete_connection(admin.ctx, c));
  return redirect("/admin/organizations/" + c.organization_id + "#connections");
}

}  // namespace

Result<pages::Html> connections_section(Admin& admin, const std::string& organization_id) {
  sso::ConnectionStore store = operations::connection_store(admin.ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(auto page, fetch_list<sso::Connection>(
                                             admin, sso::ConnectionStore::listing(organization_id),
                                             [&](const auto& request, const auto& codec) {
                                               return store.list(organization_id, request, codec);
                                             },
                                             "connections_"));
  pages::Html rows;
  for (const auto& c : page.items) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html name,
                                link(connection_path(organization_id, c.id), c.name));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html state,
                                html(R"(<span class="badge">{{s}}</span>)", {{"s", c.state}}));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html tr, row({name, text(c.type == "saml" ? "SAML" : "OIDC"),
                                                     state, text(c.create_time)}));
    rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table("SSO connections", {"Name", "Type", "State", "Created"}, rows, !page.items.empty(),
            "Connect the organization's identity provider: create a SAML connection from its "
            "metadata (or an OIDC one), test it, then activate it."));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html more, pager_of("admin/organizations/" + organization_id,
                                                         "", page, "connections", "connections_"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html type, select_field("connection_type", "Type",
                                     {{"saml", "SAML 2.0"}, {"oidc", "OpenID Connect"}}, "saml"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html name, input_field("connection_name", "Connection name", "", "text", "", true));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html xml,
                              textarea_field("idp_metadata_xml", "SAML: IdP metadata XML", "",
                                             "Paste the identity provider's metadata document."));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html url, input_field("idp_metadata_url", "SAML: or the IdP metadata URL", "", "url"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html issuer, input_field("issuer", "OIDC: issuer", "", "url"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html client_id,
                              input_field("oidc_client_id", "OIDC: client ID", ""));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html secret, input_field("oidc_client_secret", "OIDC: client secret", "", "password"));
  pages::Html fields;
  fields += type;
  fields += name;
  fields += xml;
  fields += url;
  fields += issuer;
  fields += client_id;
  fields += secret;
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html add, post_form(admin, "admin/organizations/" + organization_id + "/connections",
                                 fields, "Create connection", "primary"));
  return html(
      R"(<section aria-labelledby="connections"><h2 id="connections">SSO connections</h2>{{list}}{{more}}
<details><summary>New SSO connection</summary>{{add}}</details></section>)",
      {{"list", list}, {"more", more}, {"add", add}});
}

void install_connection_pages(server::App& app) {
  const std::string base = "/admin/organizations/{organization_id}/connections";
  add_form(app, base, create_connection);
  add_page(app, base + "/{connection_id}", show_connection);
  add_form(app, base + "/{connection_id}/test", test);
  add_form(app, base + "/{connection_id}/activate", activate);
  add_form(app, base + "/{connection_id}/deactivate", deactivate);
  add_form(app, base + "/{connection_id}/metadata", upload_metadata);
  add_form(app, base + "/{connection_id}/delete", remove);
}

}  // namespace portcullis::admin_worker
