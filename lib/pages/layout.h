// The shared page frame: document head (charset, viewport, the inline stylesheet), a <main>
// card holding the page's content, a footer; and the security headers of security_headers.h.
// Every page's content starts with an <h1 id="page-title">, which labels the <main> landmark.
#pragma once

#include <string>
#include <vector>

#include "http/response.h"
#include "pages/html.h"

namespace portcullis::pages {

struct Page {
  std::string title;  // the <title>; " · Portcullis" is appended
  Html content;
  std::vector<std::string> form_targets;  // extra CSP form-action sources (form_action_source)
};

// The HTML response (text/html; charset=utf-8) with every page header. A template bug becomes
// a bare 500 page rather than a half-rendered one.
http::Response render_page(int status, const Page& page);

}  // namespace portcullis::pages
