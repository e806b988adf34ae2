// The HTML error page: for people, never for API clients (contract §3: the authorization
// endpoint shows it when it must not redirect). It says what happened and what to do next;
// internal details stay in the log.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "http/response.h"

namespace portcullis::pages {

http::Response error_page(int status, std::string_view title, std::string_view message);

// The same with a "start again" link to the first sign-in page of a login request.
http::Response error_page(int status, std::string_view title, std::string_view message,
                          std::string_view login_request_id, std::string_view link_label);

// The page for an unknown, completed or expired login request (400, never a redirect).
http::Response expired_login_page();

// The page for a Status that ended a page handler: expired (NotFound), too many requests
// (429 with Retry-After), unavailable (503 with Retry-After), or a generic failure. Status
// messages are written for API callers and are not shown.
http::Response status_page(const Status& status);

}  // namespace portcullis::pages
