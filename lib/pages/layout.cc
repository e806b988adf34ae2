#include "pages/layout.h"

#include "log/log.h"
#include "pages/security_headers.h"
#include "pages/stylesheet.h"

namespace portcullis::pages {
namespace {

// The stylesheet is part of the template text (not a value), so it is never escaped and the
// CSP hash covers exactly these bytes.
const std::string& document_template() {
  static const std::string tmpl =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"color-scheme\" content=\"light dark\">\n"
      "<title>{{title}} · Portcullis</title>\n<style>" +
      std::string(stylesheet()) +
      "</style>\n</head>\n<body>\n<main aria-labelledby=\"page-title\">\n{{content}}\n</main>\n"
      "<footer>Secured by Portcullis</footer>\n</body>\n</html>\n";
  return tmpl;
}

}  // namespace

http::Response render_page(int status, const Page& page) {
  auto html = render(document_template(), {{"title", page.title}, {"content", page.content}});
  http::Response r;
  if (html) {
    r = http::Response::text(status, html->str(), "text/html; charset=utf-8");
  } else {
    log::error("page not rendered", {{"error", html.status().message()}});
    r = http::Response::text(500, "<!DOCTYPE html><title>Error</title><p>Internal error.</p>\n",
                             "text/html; charset=utf-8");
  }
  set_page_headers(r, page.form_targets);
  return r;
}

}  // namespace portcullis::pages
