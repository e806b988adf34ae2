// Client authentication at the token, revocation and introspection endpoints (RFC 6749 §2.3,
// contract §4): HTTP Basic (`client_secret_basic`), body parameters (`client_secret_post`), or
// a bare `client_id` (`none`). Presenting credentials in two ways at once is invalid_request.
#pragma once

#include <string>

#include "core/status.h"
#include "http/request.h"

namespace portcullis::oauth {

struct ClientCredentials {
  enum class Method { kNone, kBasic, kPost };
  Method method = Method::kNone;
  std::string client_id;
  std::string client_secret;  // empty for kNone
};

// Errors carry the OAuth `error` as their reason: invalid_request for a malformed or mixed
// presentation, invalid_client when no client is identified at all.
Result<ClientCredentials> extract_client_credentials(const http::Request& request,
                                                     const http::Form& form);

}  // namespace portcullis::oauth
