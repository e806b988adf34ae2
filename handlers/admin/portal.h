// The admin portal's request framework (docs/admin.md): every page and form of /admin goes
// through here, so each one is signed in, authorised, CSRF-checked and framed the same way.
//
//   GET  page:  admin session? ──no──► 303 /admin/login?next=…
//               an administrator? ──no──► 403 page
//               handler → View → the frame (header, navigation, skip link, main, footer)
//   POST form:  the same, and the form's `csrf` must be the session's token (and the browser
//               must not say it came from another site): else 403 and nothing changes. The
//               handler runs in one transaction with the events it records (Route::atomic),
//               each with data.by = the administrator's usr_… id.
//
// A handler's error Status becomes a framed page: NotFound 404, InvalidArgument 400 (its
// message is shown: the libraries write them for people), PermissionDenied 403, others 500/503.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "admin/access.h"
#include "admin/session_store.h"
#include "pages/html.h"
#include "server/app.h"

namespace portcullis::admin_worker {

// The signed-in administrator of one request.
struct Admin {
  server::Context& ctx;
  admin::Access access;
  admin::AdminSession session;

  store::Db& db() { return ctx.services.db; }
  const config::Config& config() const { return ctx.services.config; }
  const http::Request& request() const { return ctx.request; }
};

// What a page handler renders inside the frame.
struct View {
  std::string title;    // <title> and, by convention, the <h1 id="page-title"> of `content`
  pages::Html content;  // starts with <h1 id="page-title">
  std::string section;  // the navigation entry to mark current: "resources", "users", ...
  int status = 200;
};

using PageHandler = std::function<Result<View>(Admin&)>;
using FormHandler = std::function<Result<http::Response>(Admin&, const http::Form&)>;

void add_page(server::App& app, std::string_view pattern, PageHandler handler);
void add_form(server::App& app, std::string_view pattern, FormHandler handler);

// The framed page of `view`.
http::Response render(Admin& admin, const View& view);
// 303 to a path of the portal.
http::Response redirect(std::string path);

// Renders a fragment; a template bug is an internal error.
Result<pages::Html> html(std::string_view tmpl, std::initializer_list<pages::Slot> slots);
// <input type="hidden" name="csrf" value="…"> for the session's forms.
pages::Html csrf_field(const Admin& admin);

// NotFound for an organization the administrator may not see (answered as 404, the same as one
// that does not exist).
Status require_organization(const Admin& admin, const std::string& organization_id);
// PermissionDenied unless the administrator is an environment administrator.
Status require_environment_admin(const Admin& admin);

// The page shown when the request had no usable admin session or rights (sign-in routes).
http::Response bare_page(int status, std::string_view title, pages::Html content);

// The frame's static files and the sign-in routes.
void install_static_routes(server::App& app);

}  // namespace portcullis::admin_worker
