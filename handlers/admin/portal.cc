#include "portal.h"

#include <variant>

#include "core/time.h"
#include "crypto/compare.h"
#include "log/log.h"
#include "management/scopes.h"
#include "pages/security_headers.h"

namespace portcullis::admin_worker {
namespace {

constexpr std::string_view kDocument = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{title}} · Portcullis admin</title>
<link rel="stylesheet" href="/admin/static/admin.css">
<script src="/admin/static/admin.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<a class="brand" href="/admin">Portcullis admin</a>
{{nav}}
{{account}}
</header>
<main id="main" tabindex="-1" aria-labelledby="page-title">
{{content}}
</main>
<footer class="bottom">Portcullis admin portal · every change is recorded in the events log</footer>
</body>
</html>
)";

constexpr std::string_view kNav = R"(<nav aria-label="Sections"><ul>{{items}}</ul></nav>)";
constexpr std::string_view kNavItem =
    R"(<li><a href="/admin/{{path}}" aria-current="{{current}}">{{label}}</a></li>)";
constexpr std::string_view kAccount = R"(<form class="account" method="post" action="/admin/logout">
<input type="hidden" name="csrf" value="{{csrf}}">
<span class="who">{{email}}<span class="role"> · {{role}}</span></span>
<button type="submit" class="button secondary small">Sign out</button>
</form>)";
constexpr std::string_view kCsrf = R"(<input type="hidden" name="csrf" value="{{csrf}}">)";

constexpr std::string_view kErrorContent = R"(<h1 id="page-title">{{title}}</h1>
<p>{{message}}</p>
<p><a href="/admin">Back to the overview</a></p>)";

struct Section {
  const char* path;
  const char* label;
  bool environment_only;
};
constexpr Section kSections[] = {
    {"resources", "Resources", true}, {"organizations", "Organizations", false},
    {"users", "Users", true},         {"clients", "API clients", true},
    {"webhooks", "Webhooks", true},   {"events", "Events", true},
};

Result<pages::Html> navigation(const Admin& admin, const std::string& section) {
  pages::Html items;
  for (const Section& s : kSections) {
    if (s.environment_only && !admin.access.environment_admin) continue;
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html item,
                                html(kNavItem, {{"path", s.path},
                                                {"current", section == s.path ? "page" : "false"},
                                                {"label", s.label}}));
    items += item;
  }
  return html(kNav, {{"items", items}});
}

http::Response document(int status, const std::string& title, pages::Html nav, pages::Html account,
                        pages::Html content) {
  auto page = pages::render(kDocument, {{"title", title},
                                        {"nav", std::move(nav)},
                                        {"account", std::move(account)},
                                        {"content", std::move(content)}});
  http::Response r;
  if (page) {
    r = http::Response::text(status, page->str(), "text/html; charset=utf-8");
  } else {
    log::error("admin page not rendered", {{"error", page.status().message()}});
    r = http::Response::text(500, "<!DOCTYPE html><title>Error</title><p>Internal error.</p>\n",
                             "text/html; charset=utf-8");
  }
  pages::set_portal_headers(r);
  return r;
}

View error_view(const Status& status) {
  int code = 500;
  std::string title = "Something went wrong";
  std::string message =
      "Something went wrong on our side; nothing was changed. Try again, and if it keeps "
      "happening, look for this request in the logs.";
  switch (status.code()) {
    case Code::kNotFound:
      code = 404;
      title = "Not found";
      message = "There is nothing here, or you may not see it. Check the address.";
      break;
    case Code::kInvalidArgument:
    case Code::kFailedPrecondition:
    case Code::kAlreadyExists:
      code = status.code() == Code::kAlreadyExists ? 409 : 400;
      title = "This cannot be done";
      message = status.message();
      break;
    case Code::kPermissionDenied:
      code = 403;
      title = "Not allowed";
      message = "Your role does not allow this. Environment administrators can do it.";
      break;
    case Code::kUnavailable:
    case Code::kResourceExhausted:
      code = 503;
      title = "Temporarily unavailable";
      message = "The service is busy or the database cannot be reached. Try again in a moment.";
      break;
    default:
      log::error("admin page failed", {{"error", status.to_string()}});
      break;
  }
  auto content = html(kErrorContent, {{"title", title}, {"message", message}});
  return View{title, content ? *content : pages::Html::escape(title), "", code};
}

bool same_site(const http::Request& request) {
  auto site = request.header("sec-fetch-site");
  return !site || *site == "same-origin" || *site == "none";
}

// The administrator of this request, or the response that ends it (sign in, 403).
std::variant<Admin, http::Response> authenticate(server::Context& ctx, bool is_get) {
  const int64_t now = unix_now();
  admin::SessionStore sessions(ctx.services.db, ctx.services.config);
  auto session = sessions.current(ctx.request, now);
  if (!session) {
    if (!is_get) {
      return bare_page(403, "Your session has ended",
                       *html(R"(<h1 id="page-title">Your session has ended</h1>
<p>Nothing was changed. <a href="/admin/login">Sign in again</a>, then repeat what you did.</p>)",
                             {}));
    }
    std::string next = ctx.request.path;
    if (!ctx.request.query_string.empty()) next += "?" + ctx.request.query_string;
    return redirect("/admin/login?next=" + http::url_encode(next));
  }
  auto access = admin::access_of(ctx.services.db, session->user_id);
  if (!access) {
    View v = error_view(access.status());
    return bare_page(v.status, v.title, v.content);
  }
  if (!access->allowed()) {
    return bare_page(403, "Not an administrator",
                     *html(R"(<h1 id="page-title">Not an administrator</h1>
<p>You are signed in as <strong>{{email}}</strong>, who administers neither this environment nor an organization in it.</p>
<p>Ask an environment administrator to give you the <code>admin</code> role.</p>)",
                           {{"email", access->user.email}}));
  }
  ctx.caller.kind = server::Caller::Kind::kAdminUser;
  ctx.caller.id = session->user_id;
  // An environment administrator may do anything the management API can: they hold every
  // management scope (what they may grant an API client, for one).
  if (access->environment_admin) {
    for (const auto& s : management::all_scopes()) ctx.caller.scopes.insert(s);
  }
  return Admin{ctx, std::move(access).value(), std::move(*session)};
}

}  // namespace

Result<pages::Html> html(std::string_view tmpl, std::initializer_list<pages::Slot> slots) {
  return pages::render(tmpl, slots);
}

pages::Html csrf_field(const Admin& admin) {
  auto field = html(kCsrf, {{"csrf", admin.session.csrf_token}});
  return field ? *field : pages::Html();
}

http::Response redirect(std::string path) {
  http::Response r = http::Response::see_other(std::move(path));
  pages::set_portal_headers(r);
  return r;
}

http::Response bare_page(int status, std::string_view title, pages::Html content) {
  return document(status, std::string(title), pages::Html(), pages::Html(), std::move(content));
}

http::Response render(Admin& admin, const View& view) {
  auto nav = navigation(admin, view.section);
  auto account =
      html(kAccount, {{"csrf", admin.session.csrf_token},
                      {"email", admin.access.user.email},
                      {"role", admin.access.environment_admin ? "environment administrator"
                                                              : "organization administrator"}});
  if (!nav || !account) {
    log::error("admin frame not rendered", {});
    return document(500, "Error", pages::Html(), pages::Html(), pages::Html::escape("Error"));
  }
  return document(view.status, view.title, *nav, *account, view.content);
}

Status require_organization(const Admin& admin, const std::string& organization_id) {
  if (admin.access.sees_organization(organization_id)) return Status::ok();
  return Status::not_found("no organization " + organization_id);
}

Status require_environment_admin(const Admin& admin) {
  if (admin.access.environment_admin) return Status::ok();
  return Status::permission_denied("environment administrators only");
}

void add_page(server::App& app, std::string_view pattern, PageHandler handler) {
  app.add("GET", pattern,
          server::Route{.handler = [handler](server::Context& ctx) -> Result<http::Response> {
            auto who = authenticate(ctx, true);
            if (auto* done = std::get_if<http::Response>(&who)) return std::move(*done);
            Admin& admin = std::get<Admin>(who);
            auto view = handler(admin);
            if (!view) return render(admin, error_view(view.status()));
            return render(admin, *view);
          }});
}

void add_form(server::App& app, std::string_view pattern, FormHandler handler) {
  app.add("POST", pattern,
          server::Route{.handler = [handler](server::Context& ctx) -> Result<http::Response> {
                          auto who = authenticate(ctx, false);
                          if (auto* done = std::get_if<http::Response>(&who)) {
                            return std::move(*done);
                          }
                          Admin& admin = std::get<Admin>(who);
                          auto form = ctx.request.form();
                          auto csrf = form ? form->get("csrf") : std::nullopt;
                          if (!same_site(ctx.request) || !csrf ||
                              !crypto::constant_time_equals(*csrf, admin.session.csrf_token)) {
                            log::warn("admin form refused: CSRF token missing or wrong",
                                      {{"path", ctx.request.path}});
                            auto content = html(R"(<h1 id="page-title">This form has expired</h1>
<p>The form was not sent from this portal's page, or the page is out of date. Nothing was changed.
Reload the page and try again.</p>)",
                                                {});
                            return render(admin, View{"This form has expired",
                                                      content ? *content : pages::Html(), "", 403});
                          }
                          auto result = handler(admin, *form);
                          if (!result) {
                            // Nothing the handler wrote may stay: the transaction rolls back on
                            // an internal failure; a refusal (bad input) wrote nothing.
                            const Code c = result.status().code();
                            if (c == Code::kUnavailable || c == Code::kInternal) {
                              return result.status();
                            }
                            return render(admin, error_view(result.status()));
                          }
                          return std::move(result).value();
                        },
                        .atomic = true});
}

}  // namespace portcullis::admin_worker
