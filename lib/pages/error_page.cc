#include "pages/error_page.h"

#include "http/request.h"
#include "pages/layout.h"

namespace portcullis::pages {
namespace {

constexpr std::string_view kErrorTemplate = R"(<h1 id="page-title">{{title}}</h1>
<p class="lead">{{message}}</p>{{link}})";

constexpr std::string_view kLinkTemplate = R"(
<p><a class="button secondary" href="/oauth/login?login_request_id={{id}}">{{label}}</a></p>)";

http::Response error_with(int status, std::string_view title, std::string_view message, Html link) {
  auto content =
      render(kErrorTemplate, {{"title", title}, {"message", message}, {"link", std::move(link)}});
  Page page{std::string(title), content ? *content : Html::escape(title), {}};
  return render_page(status, page);
}

}  // namespace

http::Response error_page(int status, std::string_view title, std::string_view message) {
  return error_with(status, title, message, Html());
}

http::Response error_page(int status, std::string_view title, std::string_view message,
                          std::string_view login_request_id, std::string_view link_label) {
  auto link =
      render(kLinkTemplate, {{"id", http::url_encode(login_request_id)}, {"label", link_label}});
  return error_with(status, title, message, link ? *link : Html());
}

http::Response expired_login_page() {
  return error_page(400, "This sign-in link has expired",
                    "This sign-in link has expired; return to the application and try again.");
}

http::Response status_page(const Status& status) {
  http::Response r;
  switch (status.code()) {
    case Code::kNotFound:
      return expired_login_page();
    case Code::kResourceExhausted:
      r = error_page(429, "Too many attempts",
                     "Too many attempts in a short time. Wait a few minutes, then try again.");
      break;
    case Code::kUnavailable:
      r = error_page(503, "Temporarily unavailable",
                     "The sign-in service is temporarily unavailable. Try again in a moment.");
      break;
    case Code::kInvalidArgument:
      return error_page(400, "Something is wrong with this request",
                        "Return to the application and try again.");
    case Code::kPermissionDenied:
    case Code::kUnauthenticated:
      return error_page(403, "This form has expired",
                        "This page is out of date or was opened from another site. Return to "
                        "the application and start signing in again.");
    default:
      return error_page(500, "Something went wrong",
                        "Something went wrong on our side. Return to the application and try "
                        "again.");
  }
  int retry = status.retry_after() > 0 ? status.retry_after() : 5;
  r.set_header("Retry-After", std::to_string(retry));
  return r;
}

}  // namespace portcullis::pages
